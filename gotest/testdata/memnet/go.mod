module example.com/memnet

go 1.22
