#!/bin/sh
# A "browser" for the conformance suite: the mock authorization server
# redirects at once to North's loopback callback with a code; following the
# redirects delivers it, as a user's browser would after they consent.
exec curl -sS -L -o /dev/null --max-time 30 "$1"
