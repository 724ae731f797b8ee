module github.com/libsokovan/libsokovan/bindings/go

go 1.19
