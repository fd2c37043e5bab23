module example.com/cb

go 1.22
