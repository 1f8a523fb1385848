module github.com/trackway/trackway-go

go 1.19
