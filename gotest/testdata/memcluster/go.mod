module example.com/memcluster

go 1.22
