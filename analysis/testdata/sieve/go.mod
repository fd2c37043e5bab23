module example.com/sieve

go 1.22
