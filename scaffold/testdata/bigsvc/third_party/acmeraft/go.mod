module github.com/acme/raft

go 1.21
