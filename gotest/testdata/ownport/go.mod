module example.com/ownport

go 1.22
