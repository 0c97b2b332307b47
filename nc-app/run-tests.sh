#!/usr/bin/env bash
# The Nextcloud app's checks, without a Nextcloud: `php -l` on every PHP
# file under nc-app/ (any syntax error fails), then PHPUnit. Needs php-cli,
# php-curl, php-sqlite3 and phpunit (Debian: apt-get install php-cli
# php-curl php-sqlite3 phpunit). Run from anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."

failed=0
count=0
while IFS= read -r -d '' file; do
    count=$((count + 1))
    if ! output=$(php -l "$file" 2>&1); then
        printf '%s\n' "$output" >&2
        failed=1
    fi
done < <(find nc-app -name '*.php' -type f -print0 | sort -z)
if [ "$failed" -ne 0 ]; then
    echo "php -l: syntax errors (above)" >&2
    exit 1
fi
echo "php -l: $count files, no syntax errors"

phpunit -c nc-app/phpunit.xml
