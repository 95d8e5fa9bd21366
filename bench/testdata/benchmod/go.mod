module example.com/benchmod

go 1.26
