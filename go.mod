module github.com/gofault/gofault

go 1.25.0

require go.yaml.in/yaml/v3 v3.0.4

replace github.com/gofault/gofault/agent => ./agent
