// pgJDBC's autosave: inside a transaction the driver sets SAVEPOINT PGJDBC_AUTOSAVE
// before each statement and, when one fails, rolls back to it and goes on, so a failed
// statement does not fail the whole transaction. Usage: java JdbcAutosave URL TABLE
// Prints "ok <check>" per passed check and "done"; exits non-zero on a failed check.

import java.sql.*;

public class JdbcAutosave {
    static void check(boolean cond, String name) {
        if (!cond) {
            throw new AssertionError("check failed: " + name);
        }
        System.out.println("ok " + name);
    }

    static int count(Connection conn, String sql) throws SQLException {
        try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getInt(1);
        }
    }

    public static void main(String[] args) throws Exception {
        String url = args[0];
        String table = args[1];
        try (Connection conn = DriverManager.getConnection(url)) {
            try (Statement st = conn.createStatement()) {
                st.execute("CREATE TABLE " + table + " (id int PRIMARY KEY, note varchar)");
            }
            conn.setAutoCommit(false);
            try (PreparedStatement ins = conn.prepareStatement(
                    "INSERT INTO " + table + " VALUES (?, ?)")) {
                for (int i = 1; i <= 3; i++) {
                    ins.setInt(1, i);
                    ins.setString(2, "before " + i);
                    check(ins.executeUpdate() == 1, "insert " + i);
                }
                ins.setInt(1, 2);
                ins.setString(2, "duplicate");
                try {
                    ins.executeUpdate();
                    check(false, "duplicate key must fail");
                } catch (SQLException e) {
                    check("23505".equals(e.getSQLState()), "duplicate key is 23505");
                }
                // Without autosave this would be 25P02: the transaction goes on instead.
                ins.setInt(1, 4);
                ins.setString(2, "after the error");
                check(ins.executeUpdate() == 1, "insert after a failed statement");
            }
            try (Statement st = conn.createStatement()) {
                try {
                    st.executeQuery("SELECT 'twelve'::int");
                    check(false, "a bad integer must fail");
                } catch (SQLException e) {
                    check("22P02".equals(e.getSQLState()), "a bad integer is 22P02");
                }
                check(st.executeUpdate("UPDATE " + table + " SET note = 'changed' WHERE id = 1")
                    == 1, "update after a second failed statement");
            }
            check(count(conn, "SELECT count(*) FROM " + table) == 4, "4 rows inside the block");
            conn.commit();
            conn.setAutoCommit(true);
            check(count(conn, "SELECT count(*) FROM " + table) == 4, "4 rows committed");
            check(count(conn, "SELECT count(*) FROM " + table + " WHERE note = 'changed'") == 1,
                "the update committed");
            check(count(conn, "SELECT count(*) FROM " + table + " WHERE note = 'duplicate'") == 0,
                "the failed insert left nothing");
            // A rolled-back block leaves nothing behind, autosave or not.
            conn.setAutoCommit(false);
            try (Statement st = conn.createStatement()) {
                st.executeUpdate("INSERT INTO " + table + " VALUES (5, 'rolled back')");
            }
            conn.rollback();
            conn.setAutoCommit(true);
            check(count(conn, "SELECT count(*) FROM " + table) == 4, "rollback kept 4 rows");
            try (Statement st = conn.createStatement()) {
                st.execute("DROP TABLE " + table);
            }
        }
        System.out.println("done");
    }
}
