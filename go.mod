module github.com/robotexec/robotexec

go 1.26.8
