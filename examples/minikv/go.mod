module github.com/gofault/gofault/examples/minikv

go 1.26.0

require (
	github.com/gofault/gofault v0.0.0-00010101000000-000000000000
	github.com/gofault/gofault/agent v0.0.0-00010101000000-000000000000
)

replace github.com/gofault/gofault => ../..

replace github.com/gofault/gofault/agent => ../../agent
