module github.com/acme/bigsvc

go 1.21

require (
	github.com/acme/raft v0.1.0
	github.com/hashicorp/raft v1.7.0
)

replace github.com/acme/raft => ./third_party/acmeraft

replace github.com/hashicorp/raft => ./third_party/hashiraft
