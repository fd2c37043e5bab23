module example.com/observe

go 1.22
