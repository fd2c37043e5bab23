module example.com/leftstore

go 1.22
