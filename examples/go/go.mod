module github.com/libsokovan/libsokovan/examples/go

go 1.19

require github.com/libsokovan/libsokovan/bindings/go v0.0.0

replace github.com/libsokovan/libsokovan/bindings/go => ../../bindings/go
