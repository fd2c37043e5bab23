module example.com/observehraft

go 1.22
