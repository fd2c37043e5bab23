module example.com/retrystore

go 1.22
