module example.com/leakstore

go 1.22
