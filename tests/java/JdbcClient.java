// pgJDBC against a running hatiproxy. Usage: java -cp postgresql.jar:. JdbcClient URL TABLE
// Prints one "ok <check>" line per passed check and "meta <call> <result>" lines for the
// DatabaseMetaData calls; exits non-zero on the first failed core check.

import java.math.BigDecimal;
import java.sql.*;
import java.util.ArrayList;
import java.util.List;

public class JdbcClient {
    static void check(boolean cond, String name) {
        if (!cond) {
            throw new AssertionError("check failed: " + name);
        }
        System.out.println("ok " + name);
    }

    public static void main(String[] args) throws Exception {
        String url = args[0];
        String table = args[1];
        try (Connection conn = DriverManager.getConnection(url)) {
            core(conn, table);
            metadata(conn, table);
            try (Statement st = conn.createStatement()) {
                st.execute("DROP TABLE " + table);
            }
        }
        System.out.println("done");
    }

    static void core(Connection conn, String table) throws SQLException {
        try (Statement st = conn.createStatement()) {
            st.execute("CREATE TABLE " + table
                + " (id int PRIMARY KEY, name varchar, price numeric(10,2), born date,"
                + " seen timestamp, flag boolean, score double precision)");
        }
        // Reused past prepareThreshold: the driver switches to named server statements.
        try (PreparedStatement ps = conn.prepareStatement(
                "INSERT INTO " + table + " VALUES (?, ?, ?, ?, ?, ?, ?)")) {
            for (int i = 0; i < 6; i++) {
                ps.setInt(1, i);
                ps.setString(2, "name" + i);
                ps.setBigDecimal(3, new BigDecimal(i + ".25"));
                ps.setDate(4, Date.valueOf("2024-01-0" + (i + 1)));
                ps.setTimestamp(5, Timestamp.valueOf("2024-05-06 07:08:09.123456"));
                ps.setBoolean(6, i % 2 == 0);
                ps.setDouble(7, i * 1.5);
                check(ps.executeUpdate() == 1, "insert " + i);
            }
        }
        try (PreparedStatement ps = conn.prepareStatement(
                "SELECT id, name, price, born, seen, flag, score FROM " + table + " WHERE id = ?")) {
            for (int round = 0; round < 5; round++) {
                ps.setInt(1, 3);
                try (ResultSet rs = ps.executeQuery()) {
                    check(rs.next(), "row found, round " + round);
                    check(rs.getInt(1) == 3 && rs.getString(2).equals("name3"), "int/text " + round);
                    check(rs.getBigDecimal(3).equals(new BigDecimal("3.25")), "numeric " + round);
                    check(rs.getDate(4).toString().equals("2024-01-04"), "date " + round);
                    check(rs.getTimestamp(5).equals(Timestamp.valueOf("2024-05-06 07:08:09.123456")),
                        "timestamp " + round);
                    check(!rs.getBoolean(6) && rs.getDouble(7) == 4.5, "bool/double " + round);
                    check(!rs.next(), "single row " + round);
                }
            }
        }
        // Batch inserts.
        try (PreparedStatement ps = conn.prepareStatement(
                "INSERT INTO " + table + " (id, name) VALUES (?, ?)")) {
            for (int i = 100; i < 110; i++) {
                ps.setInt(1, i);
                ps.setString(2, "batch" + i);
                ps.addBatch();
            }
            int[] counts = ps.executeBatch();
            int total = 0;
            for (int c : counts) {
                total += (c == Statement.SUCCESS_NO_INFO) ? 1 : c;
            }
            check(counts.length == 10 && total == 10, "batch insert");
        }
        // Transactions.
        conn.setAutoCommit(false);
        try (Statement st = conn.createStatement()) {
            st.executeUpdate("DELETE FROM " + table + " WHERE id >= 100");
            conn.rollback();
            try (ResultSet rs = st.executeQuery("SELECT count(*) FROM " + table)) {
                rs.next();
                check(rs.getLong(1) == 16, "rollback kept rows");
            }
            int deleted = st.executeUpdate("DELETE FROM " + table + " WHERE id >= 100");
            check(deleted == 10, "delete count");
            conn.commit();
            try {
                st.executeUpdate("INSERT INTO " + table + " (id) VALUES (1)");
                check(false, "duplicate key must fail");
            } catch (SQLException e) {
                check("23505".equals(e.getSQLState()), "unique violation sqlstate " + e.getSQLState());
            }
            conn.rollback();
        }
        conn.setAutoCommit(true);
        // Errors carry SQLSTATEs; the connection survives.
        try (Statement st = conn.createStatement()) {
            try {
                st.executeQuery("SELECT * FROM no_such_table_jdbc");
                check(false, "missing table must fail");
            } catch (SQLException e) {
                check("42P01".equals(e.getSQLState()), "undefined table sqlstate");
            }
            try (ResultSet rs = st.executeQuery("SELECT 'still' || ' here', ARRAY[1,2]::int[]")) {
                rs.next();
                check(rs.getString(1).equals("still here"), "usable after error");
                Integer[] arr = (Integer[]) rs.getArray(2).getArray();
                check(arr.length == 2 && arr[1] == 2, "int array");
            }
        }
    }

    // Metadata depends on the pg_catalog layer: report each call, do not stop on failure.
    static void metadata(Connection conn, String table) {
        DatabaseMetaData md;
        try {
            md = conn.getMetaData();
            System.out.println("meta product " + md.getDatabaseProductName() + " "
                + md.getDatabaseMajorVersion());
        } catch (SQLException e) {
            System.out.println("meta product ERROR " + e.getSQLState() + " " + e.getMessage());
            return;
        }
        report("getSchemas", () -> {
            List<String> out = new ArrayList<>();
            try (ResultSet rs = md.getSchemas()) {
                while (rs.next()) out.add(rs.getString("TABLE_SCHEM"));
            }
            return String.join(",", out);
        });
        report("getTables", () -> {
            List<String> out = new ArrayList<>();
            try (ResultSet rs = md.getTables(null, "public", table, new String[] {"TABLE"})) {
                while (rs.next()) out.add(rs.getString("TABLE_NAME"));
            }
            return String.join(",", out);
        });
        report("getColumns", () -> {
            List<String> out = new ArrayList<>();
            try (ResultSet rs = md.getColumns(null, "public", table, null)) {
                while (rs.next()) out.add(rs.getString("COLUMN_NAME") + ":" + rs.getString("TYPE_NAME"));
            }
            return String.join(",", out);
        });
        // ResultSetMetaData reads pg_attribute by RowDescription's table oid and attnum
        report("resultSetMetaData", () -> {
            List<String> out = new ArrayList<>();
            try (Statement st = conn.createStatement();
                 ResultSet rs = st.executeQuery(
                     "SELECT id, name AS who, id + 1 AS next FROM " + table)) {
                ResultSetMetaData rm = rs.getMetaData();
                org.postgresql.PGResultSetMetaData pm = (org.postgresql.PGResultSetMetaData) rm;
                for (int i = 1; i <= rm.getColumnCount(); i++) {
                    out.add(rm.getColumnLabel(i) + ":" + rm.getTableName(i) + ":"
                        + pm.getBaseColumnName(i) + ":" + rm.isNullable(i));
                }
            }
            return String.join(",", out);
        });
        report("getPrimaryKeys", () -> {
            List<String> out = new ArrayList<>();
            try (ResultSet rs = md.getPrimaryKeys(null, "public", table)) {
                while (rs.next()) out.add(rs.getString("COLUMN_NAME"));
            }
            return String.join(",", out);
        });
    }

    interface MetaCall {
        String run() throws SQLException;
    }

    static void report(String name, MetaCall call) {
        try {
            System.out.println("meta " + name + " " + call.run());
        } catch (SQLException e) {
            System.out.println("meta " + name + " ERROR " + e.getSQLState() + " "
                + e.getMessage().replace('\n', ' '));
        }
    }
}
