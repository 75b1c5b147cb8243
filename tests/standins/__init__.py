"""Stand-ins for remote services no test can reach, served over real HTTP on 127.0.0.1."""
