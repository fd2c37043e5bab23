module github.com/gofault/gofault/agent

go 1.21
