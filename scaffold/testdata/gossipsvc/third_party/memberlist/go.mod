module github.com/hashicorp/memberlist

go 1.21
