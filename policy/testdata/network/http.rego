package shardgate.rules.phone_home

deny contains {"msg": "remote says no"} if {
	resp := http.send({"method": "GET", "url": "http://example.invalid/"})
	resp.status_code != 200
}
