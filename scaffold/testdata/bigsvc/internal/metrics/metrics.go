// Package metrics is reached by no main: left out of target.packages.
package metrics
