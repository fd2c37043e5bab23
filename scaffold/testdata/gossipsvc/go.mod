module github.com/acme/gossipsvc

go 1.21

require github.com/hashicorp/memberlist v0.5.4

replace github.com/hashicorp/memberlist => ./third_party/memberlist
