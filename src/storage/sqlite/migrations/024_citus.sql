-- Nothing on SQLite: PostgreSQL's 024 distributes the tables when the `citus` extension is
-- there. The number is kept in step with PostgreSQL's migrations (migration-files.test.ts).
SELECT 1;
