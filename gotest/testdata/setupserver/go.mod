module example.com/setupserver

go 1.22
