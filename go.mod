module github.com/leaguectl/leaguectl

go 1.26.0

require (
	github.com/go-json-experiment/json v0.0.0-20260820222146-c27c302e5fc3
	github.com/matryer/is v1.4.1
)
