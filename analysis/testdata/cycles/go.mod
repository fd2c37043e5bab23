module example.com/cy

go 1.22
