module example.com/ignoredstore

go 1.22
