// pgx (v4) and lib/pq (database/sql) doing what a Go service does, against the server
// named by argv (host port user database). Prints one JSON object: each step's result, or
// its error (SQLSTATE), so PostgreSQL 15's run and hatiproxy's compare step by step.
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/jackc/pgconn"
	"github.com/jackc/pgtype"
	"github.com/jackc/pgx/v4"
	"github.com/jackc/pgx/v4/pgxpool"
	"github.com/lib/pq"
)

var out = map[string]interface{}{}

func errInfo(err error) interface{} {
	var pge *pgconn.PgError
	if errors.As(err, &pge) {
		return map[string]string{"code": pge.Code, "constraint": pge.ConstraintName, "table": pge.TableName}
	}
	var pqe *pq.Error
	if errors.As(err, &pqe) {
		return map[string]string{"code": string(pqe.Code), "constraint": pqe.Constraint, "table": pqe.Table}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "deadline"
	}
	return "error: " + err.Error()
}

// step records f's value, or its error.
func step(name string, f func() (interface{}, error)) {
	defer func() {
		if r := recover(); r != nil {
			out[name] = fmt.Sprintf("panic: %v", r)
		}
	}()
	v, err := f()
	if err != nil {
		out[name] = map[string]interface{}{"err": errInfo(err)}
		return
	}
	out[name] = v
}

func main() {
	host, port, user, db := os.Args[1], os.Args[2], os.Args[3], os.Args[4]
	dsn := fmt.Sprintf("postgres://%s@%s:%s/%s?sslmode=disable", user, host, port, db)
	ctx := context.Background()
	defer func() {
		b, _ := json.Marshal(out)
		fmt.Println(string(b))
	}()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		out["connect"] = errInfo(err)
		return
	}
	defer conn.Close(ctx)
	pgxSteps(ctx, conn, dsn)
	pqSteps(dsn)
}

func pgxSteps(ctx context.Context, conn *pgx.Conn, dsn string) {
	step("ddl", func() (interface{}, error) {
		for _, q := range []string{
			"DROP TABLE IF EXISTS go_pet", "DROP TABLE IF EXISTS go_owner", "DROP TABLE IF EXISTS go_copy",
			"CREATE TABLE go_owner (id int PRIMARY KEY, name text NOT NULL UNIQUE)",
			"CREATE TABLE go_pet (id int PRIMARY KEY, owner_id int REFERENCES go_owner(id), tag varchar(20))",
			"CREATE TABLE go_copy (id int8, name text, score float8, born date)",
		} {
			if _, err := conn.Exec(ctx, q); err != nil {
				return q, err
			}
		}
		return "ok", nil
	})
	step("dml", func() (interface{}, error) {
		res := []int64{}
		for _, q := range []struct {
			sql  string
			args []interface{}
		}{
			{"INSERT INTO go_owner VALUES ($1, $2), ($3, $4)", []interface{}{1, "Ada", 2, "Bob"}},
			{"INSERT INTO go_pet VALUES ($1, $2, $3)", []interface{}{1, 1, "cat"}},
			{"UPDATE go_owner SET name = name || '!' WHERE id >= $1", []interface{}{1}},
			{"DELETE FROM go_owner WHERE id = $1", []interface{}{2}},
		} {
			tag, err := conn.Exec(ctx, q.sql, q.args...)
			if err != nil {
				return res, err
			}
			res = append(res, tag.RowsAffected())
		}
		return res, nil
	})
	step("scalars", func() (interface{}, error) {
		var (
			i2  int16
			i4  int32
			i8  int64
			f4  float32
			f8  float64
			num pgtype.Numeric
			ns  string
			nf  float64
			t   string
			vc  string
			b   bool
			by  []byte
			d   time.Time
			ts  time.Time
			tz  time.Time
			iv  pgtype.Interval
			u   pgtype.UUID
		)
		err := conn.QueryRow(ctx, `SELECT $1::int2, $2::int4, $3::int8, $4::float4, $5::float8,
			12.345::numeric, 99.50::numeric::text, 2.5::numeric::float8, $6::text, 'vc'::varchar(5), $7::bool,
			'\xdeadbeef'::bytea, '2024-02-29'::date, '2024-01-02 03:04:05.123456'::timestamp,
			'2024-01-02 03:04:05+00'::timestamptz, '1 day 02:03:04'::interval,
			'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid`,
			int16(7), int32(-8), int64(1)<<40, float32(1.5), 2.25, "héllo", true).Scan(
			&i2, &i4, &i8, &f4, &f8, &num, &ns, &nf, &t, &vc, &b, &by, &d, &ts, &tz, &iv, &u)
		if err != nil {
			return nil, err
		}
		var numf float64
		_ = num.AssignTo(&numf)
		us, _ := u.Value()
		return []interface{}{i2, i4, i8, f4, f8, numf, ns, nf, t, vc, b, fmt.Sprintf("%x", by),
			d.Format("2006-01-02"), ts.Format(time.RFC3339Nano), tz.UTC().Format(time.RFC3339),
			[]interface{}{iv.Months, iv.Days, iv.Microseconds}, us}, nil
	})
	step("numeric_param", func() (interface{}, error) {
		var s string
		err := conn.QueryRow(ctx, "SELECT ($1::numeric * 2)::text", "10.25").Scan(&s)
		return s, err
	})
	step("json", func() (interface{}, error) {
		var m map[string]interface{}
		var raw []byte
		err := conn.QueryRow(ctx, `SELECT '{"a": 1, "b": [true, null]}'::json, $1::jsonb`,
			map[string]interface{}{"k": "v"}).Scan(&m, &raw)
		return []interface{}{m, string(raw)}, err
	})
	step("arrays", func() (interface{}, error) {
		var ia []int32
		var ta []string
		err := conn.QueryRow(ctx, "SELECT $1::int[], ARRAY['x', 'y z']::text[]", []int32{3, 1, 2}).Scan(&ia, &ta)
		return []interface{}{ia, ta}, err
	})
	step("nulls", func() (interface{}, error) {
		var a *int32
		var s *string
		var t *time.Time
		err := conn.QueryRow(ctx, "SELECT NULL::int4, NULL::text, NULL::timestamptz").Scan(&a, &s, &t)
		return []interface{}{a == nil, s == nil, t == nil}, err
	})
	step("query_rows", func() (interface{}, error) {
		rows, err := conn.Query(ctx, "SELECT g, g * $1 FROM generate_series(1, 3) AS g ORDER BY g", 10)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		res := [][]int64{}
		for rows.Next() {
			var a, b int64
			if err := rows.Scan(&a, &b); err != nil {
				return res, err
			}
			res = append(res, []int64{a, b})
		}
		return res, rows.Err()
	})
	step("query_func", func() (interface{}, error) {
		var names []string
		var s string
		_, err := conn.QueryFunc(ctx, "SELECT name FROM go_owner ORDER BY id", nil, []interface{}{&s},
			func(pgx.QueryFuncRow) error { names = append(names, s); return nil })
		return names, err
	})
	step("batch", func() (interface{}, error) {
		b := &pgx.Batch{}
		b.Queue("INSERT INTO go_owner VALUES ($1, $2)", 3, "Cy")
		b.Queue("SELECT count(*) FROM go_owner")
		b.Queue("INSERT INTO go_owner VALUES ($1, $2)", 3, "dup")
		b.Queue("SELECT 1")
		br := conn.SendBatch(ctx, b)
		res := []interface{}{}
		tag, err := br.Exec()
		res = append(res, tag.RowsAffected(), errOrNil(err))
		var n int64
		res = append(res, errOrNil(br.QueryRow().Scan(&n)), n)
		_, err = br.Exec()
		res = append(res, errOrNil(err))
		_, err = br.Exec()
		res = append(res, errOrNil(err))
		res = append(res, errOrNil(br.Close()))
		var cnt int64
		err = conn.QueryRow(ctx, "SELECT count(*) FROM go_owner").Scan(&cnt)
		return append(res, cnt), err
	})
	step("copy_from", func() (interface{}, error) {
		rows := make([][]interface{}, 10000)
		base := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
		for i := range rows {
			rows[i] = []interface{}{int64(i), fmt.Sprintf("n%d", i), float64(i) / 4, base.AddDate(0, 0, i%365)}
		}
		n, err := conn.CopyFrom(ctx, pgx.Identifier{"go_copy"}, []string{"id", "name", "score", "born"},
			pgx.CopyFromRows(rows))
		if err != nil {
			return n, err
		}
		var cnt, sum int64
		var sc float64
		var maxd time.Time
		var last string
		err = conn.QueryRow(ctx, "SELECT count(*), sum(id), sum(score), max(born), max(name) FROM go_copy").
			Scan(&cnt, &sum, &sc, &maxd, &last)
		return []interface{}{n, cnt, sum, sc, maxd.Format("2006-01-02"), last}, err
	})
	step("tx", func() (interface{}, error) {
		res := []interface{}{}
		tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.Serializable, AccessMode: pgx.ReadWrite})
		if err != nil {
			return nil, err
		}
		var iso string
		if err := tx.QueryRow(ctx, "SHOW transaction_isolation").Scan(&iso); err != nil {
			return res, err
		}
		res = append(res, iso)
		if _, err := tx.Exec(ctx, "INSERT INTO go_owner VALUES (10, 'tx')"); err != nil {
			return res, err
		}
		sp, err := tx.Begin(ctx) // savepoint
		if err != nil {
			return res, err
		}
		_, err = sp.Exec(ctx, "INSERT INTO go_owner VALUES (10, 'again')")
		res = append(res, errOrNil(err))
		res = append(res, errOrNil(sp.Rollback(ctx)))
		if _, err := tx.Exec(ctx, "INSERT INTO go_owner VALUES (11, 'tx2')"); err != nil {
			return res, err
		}
		res = append(res, errOrNil(tx.Commit(ctx)))
		tx2, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted, AccessMode: pgx.ReadOnly})
		if err != nil {
			return res, err
		}
		_, err = tx2.Exec(ctx, "INSERT INTO go_owner VALUES (12, 'ro')")
		res = append(res, errOrNil(err))
		res = append(res, errOrNil(tx2.Rollback(ctx)))
		tx3, _ := conn.Begin(ctx)
		_, _ = tx3.Exec(ctx, "INSERT INTO go_owner VALUES (13, 'rb')")
		res = append(res, errOrNil(tx3.Rollback(ctx)))
		var ids []int32
		err = pgxCollect(ctx, conn, "SELECT id FROM go_owner ORDER BY id", &ids)
		return append(res, ids), err
	})
	step("errors", func() (interface{}, error) {
		res := []interface{}{}
		for _, q := range []string{
			"INSERT INTO go_owner VALUES (1, 'x')",
			"INSERT INTO go_pet VALUES (2, 999, 'dog')",
			"INSERT INTO go_owner VALUES (20, NULL)",
			"SELECT 'abc'::int",
			"SELECT * FROM go_missing",
		} {
			_, err := conn.Exec(ctx, q)
			res = append(res, errOrNil(err))
		}
		return res, nil
	})
	step("simple_protocol", func() (interface{}, error) {
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			return nil, err
		}
		cfg.PreferSimpleProtocol = true
		c, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			return nil, err
		}
		defer c.Close(ctx)
		var a int64
		var s string
		var ts time.Time
		var f float64
		err = c.QueryRow(ctx, "SELECT $1::int8 + 1, $2::text, $3::timestamptz, $4::float8",
			41, "it's", time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC), 0.5).Scan(&a, &s, &ts, &f)
		return []interface{}{a, s, ts.UTC().Format(time.RFC3339), f}, err
	})
	step("cancel", func() (interface{}, error) {
		cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		_, err := conn.Exec(cctx, "SELECT pg_sleep(5)")
		res := []interface{}{errOrNil(err), conn.IsClosed()}
		// pgx closes a connection whose query a context interrupted; a new one works
		c, err2 := pgx.Connect(ctx, dsn)
		if err2 != nil {
			return res, err2
		}
		defer c.Close(ctx)
		var one int
		err2 = c.QueryRow(ctx, "SELECT 1").Scan(&one)
		return append(res, one), err2
	})
	step("pool", func() (interface{}, error) {
		pool, err := pgxpool.Connect(ctx, dsn+"&pool_max_conns=4")
		if err != nil {
			return nil, err
		}
		defer pool.Close()
		var wg sync.WaitGroup
		sums := make([]int64, 8)
		errs := make([]error, 8)
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				for k := 0; k < 5; k++ {
					var v int64
					if err := pool.QueryRow(ctx, "SELECT $1::int8 * 100 + $2", g, k).Scan(&v); err != nil {
						errs[g] = err
						return
					}
					sums[g] += v
				}
			}(g)
		}
		wg.Wait()
		for _, e := range errs {
			if e != nil {
				return sums, e
			}
		}
		return sums, nil
	})
}

func pgxCollect(ctx context.Context, conn *pgx.Conn, q string, dst *[]int32) error {
	rows, err := conn.Query(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var v int32
		if err := rows.Scan(&v); err != nil {
			return err
		}
		*dst = append(*dst, v)
	}
	return rows.Err()
}

func errOrNil(err error) interface{} {
	if err == nil {
		return nil
	}
	return errInfo(err)
}

func pqSteps(dsn string) {
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		out["pq_open"] = errInfo(err)
		return
	}
	defer db.Close()
	db.SetMaxOpenConns(3)
	step("pq_exec", func() (interface{}, error) {
		if _, err := db.Exec("DROP TABLE IF EXISTS go_pq"); err != nil {
			return nil, err
		}
		if _, err := db.Exec("CREATE TABLE go_pq (id int PRIMARY KEY, name text, tags text[], amount numeric)"); err != nil {
			return nil, err
		}
		r, err := db.Exec("INSERT INTO go_pq VALUES ($1, $2, $3, $4), ($5, $6, $7, $8)",
			1, "a", pq.Array([]string{"x", "y"}), "1.50", 2, "b", pq.Array([]string{}), nil)
		if err != nil {
			return nil, err
		}
		return r.RowsAffected()
	})
	step("pq_query", func() (interface{}, error) {
		rows, err := db.Query("SELECT id, name, tags, amount FROM go_pq WHERE id >= $1 ORDER BY id", 1)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		res := []interface{}{}
		for rows.Next() {
			var id int
			var name string
			var tags []string
			var amount sql.NullString
			if err := rows.Scan(&id, &name, pq.Array(&tags), &amount); err != nil {
				return res, err
			}
			res = append(res, []interface{}{id, name, tags, amount.String, amount.Valid})
		}
		return res, rows.Err()
	})
	step("pq_types", func() (interface{}, error) {
		var b bool
		var f float64
		var by []byte
		var ts time.Time
		var ia pq.Int64Array
		err := db.QueryRow(`SELECT $1::bool, $2::float8, '\x0102'::bytea, '2024-01-02 03:04:05+00'::timestamptz, ARRAY[1,2]`,
			true, 1.25).Scan(&b, &f, &by, &ts, &ia)
		return []interface{}{b, f, fmt.Sprintf("%x", by), ts.UTC().Format(time.RFC3339), []int64(ia)}, err
	})
	step("pq_copy", func() (interface{}, error) {
		tx, err := db.Begin()
		if err != nil {
			return nil, err
		}
		st, err := tx.Prepare(pq.CopyIn("go_pq", "id", "name", "amount"))
		if err != nil {
			tx.Rollback()
			return nil, err
		}
		for i := 100; i < 200; i++ {
			if _, err := st.Exec(i, fmt.Sprintf("c\t%d", i), float64(i)/2); err != nil {
				tx.Rollback()
				return nil, err
			}
		}
		if _, err := st.Exec(); err != nil {
			tx.Rollback()
			return nil, err
		}
		if err := st.Close(); err != nil {
			tx.Rollback()
			return nil, err
		}
		if err := tx.Commit(); err != nil {
			return nil, err
		}
		var n int
		var s string
		err = db.QueryRow("SELECT count(*), max(name) FROM go_pq WHERE id >= 100").Scan(&n, &s)
		return []interface{}{n, s}, err
	})
	step("pq_tx", func() (interface{}, error) {
		tx, err := db.Begin()
		if err != nil {
			return nil, err
		}
		if _, err := tx.Exec("INSERT INTO go_pq (id, name) VALUES ($1, $2)", 3, "rolled"); err != nil {
			return nil, err
		}
		if err := tx.Rollback(); err != nil {
			return nil, err
		}
		tx, err = db.Begin()
		if err != nil {
			return nil, err
		}
		if _, err := tx.Exec("INSERT INTO go_pq (id, name) VALUES ($1, $2)", 4, "kept"); err != nil {
			return nil, err
		}
		if err := tx.Commit(); err != nil {
			return nil, err
		}
		var ids []int
		rows, err := db.Query("SELECT id FROM go_pq WHERE id < 100 ORDER BY id")
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		for rows.Next() {
			var id int
			rows.Scan(&id)
			ids = append(ids, id)
		}
		return ids, rows.Err()
	})
	step("pq_errors", func() (interface{}, error) {
		res := []interface{}{}
		for _, q := range []string{
			"INSERT INTO go_pq (id) VALUES (1)", "SELECT 'x'::int", "SELECT * FROM go_nope",
		} {
			_, err := db.Exec(q)
			res = append(res, errOrNil(err))
		}
		return res, nil
	})
	step("pq_prepare", func() (interface{}, error) {
		st, err := db.Prepare("SELECT name FROM go_pq WHERE id = $1")
		if err != nil {
			return nil, err
		}
		defer st.Close()
		res := []string{}
		for _, id := range []int{1, 2, 4} {
			var s string
			if err := st.QueryRow(id).Scan(&s); err != nil {
				return res, err
			}
			res = append(res, s)
		}
		return res, nil
	})
	step("pq_pool", func() (interface{}, error) {
		var wg sync.WaitGroup
		vals := make([]int, 6)
		errs := make([]error, 6)
		for g := 0; g < 6; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				errs[g] = db.QueryRow("SELECT $1::int * 3", g).Scan(&vals[g])
			}(g)
		}
		wg.Wait()
		for _, e := range errs {
			if e != nil {
				return vals, e
			}
		}
		sort.Ints(vals)
		return []interface{}{vals, db.Stats().MaxOpenConnections}, nil
	})
}
