module example.com/setupreach

go 1.22
