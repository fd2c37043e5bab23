module example.com/kvstore

go 1.21

require github.com/other/raft v0.1.0
