module example.com/observenats

go 1.22
