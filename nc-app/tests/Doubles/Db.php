<?php

declare(strict_types=1);

namespace OCA\Tamebi\Tests\Doubles;

use OCA\Tamebi\Migration\Version1000Date20260801000000;
use OCP\DB\IResult;
use OCP\DB\ISchemaWrapper;
use OCP\IDBConnection;
use OCP\Migration\IOutput;

/**
 * IDBConnection over SQLite in memory, with the schema the app's own
 * migration declares, so the stores' SQL runs against the columns that
 * Nextcloud would create. `*PREFIX*` becomes `oc_`, as Nextcloud does.
 */
final class SqliteConnection implements IDBConnection {
	public \PDO $pdo;

	public function __construct() {
		$this->pdo = new \PDO('sqlite::memory:');
		$this->pdo->setAttribute(\PDO::ATTR_ERRMODE, \PDO::ERRMODE_EXCEPTION);
		$schema = new SchemaRecorder();
		(new Version1000Date20260801000000())->changeSchema(new class implements IOutput {
		}, fn () => $schema, []);
		foreach ($schema->tables as $name => $table) {
			$this->pdo->exec($table->createStatement('oc_' . $name));
		}
	}

	public function executeQuery(string $sql, array $params = [], $types = []): IResult {
		$statement = $this->run($sql, $params, $types);
		return new class($statement) implements IResult {
			public function __construct(private \PDOStatement $statement) {
			}

			public function closeCursor(): bool {
				return $this->statement->closeCursor();
			}

			public function fetch(int $fetchMode = \PDO::FETCH_ASSOC) {
				return $this->statement->fetch($fetchMode);
			}

			public function fetchAll(int $fetchMode = \PDO::FETCH_ASSOC): array {
				return $this->statement->fetchAll($fetchMode);
			}
		};
	}

	public function executeStatement($sql, array $params = [], array $types = []): int {
		return $this->run($sql, $params, $types)->rowCount();
	}

	private function run(string $sql, array $params, array $types): \PDOStatement {
		$statement = $this->pdo->prepare(str_replace('*PREFIX*', 'oc_', $sql));
		foreach (array_values($params) as $i => $value) {
			// IQueryBuilder::PARAM_INT and PARAM_STR equal PDO's constants.
			$statement->bindValue($i + 1, $value, $types[$i] ?? \PDO::PARAM_STR);
		}
		$statement->execute();
		return $statement;
	}
}

final class SchemaRecorder implements ISchemaWrapper {
	/** @var array<string, TableRecorder> */
	public array $tables = [];

	public function hasTable($tableName) {
		return isset($this->tables[$tableName]);
	}

	public function createTable($tableName) {
		return $this->tables[$tableName] = new TableRecorder();
	}
}

final class TableRecorder {
	/** @var array<string, array{type: string, options: array}> */
	public array $columns = [];
	public array $primaryKey = [];
	public array $indexes = [];

	public function addColumn(string $name, string $type, array $options = []): void {
		$this->columns[$name] = ['type' => $type, 'options' => $options];
	}

	public function setPrimaryKey(array $columns): void {
		$this->primaryKey = $columns;
	}

	public function addIndex(array $columns, string $name): void {
		$this->indexes[$name] = $columns;
	}

	public function createStatement(string $name): string {
		$lines = [];
		foreach ($this->columns as $column => $spec) {
			$type = match ($spec['type']) {
				'bigint' => 'INTEGER',
				'string' => 'VARCHAR(' . $spec['options']['length'] . ')',
				'text' => 'TEXT',
			};
			$lines[] = "`$column` $type" . (($spec['options']['notnull'] ?? false) ? ' NOT NULL' : '');
		}
		$lines[] = 'PRIMARY KEY (`' . implode('`, `', $this->primaryKey) . '`)';
		return "CREATE TABLE `$name` (" . implode(', ', $lines) . ')';
	}
}
