// Package email is reached by the node program but holds no replicated state.
package email

// Send does nothing.
func Send() {}
