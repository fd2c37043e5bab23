module github.com/hashicorp/raft

go 1.21
