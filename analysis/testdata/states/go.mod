module example.com/states

go 1.22
