package myorg.lib

limit := 32
