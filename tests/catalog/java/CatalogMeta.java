import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;

/**
 * Prints the DatabaseMetaData answers hatiproxy's catalog layer must get right, one
 * line per row: "<call>\t<col>=<value>\t...". Args: jdbc-url table-name.
 */
public class CatalogMeta {
    public static void main(String[] args) throws Exception {
        String url = args[0];
        String table = args[1];
        try (Connection conn = DriverManager.getConnection(url)) {
            DatabaseMetaData md = conn.getMetaData();
            print("product", md.getDatabaseProductName() + " " + md.getDatabaseProductVersion());
            dump("getSchemas", md.getSchemas());
            dump("getTables", md.getTables(null, "public", "%", new String[] {"TABLE", "VIEW"}));
            dump("getColumns", md.getColumns(null, "public", table, "%"));
            dump("getPrimaryKeys", md.getPrimaryKeys(null, "public", table));
        }
    }

    private static void print(String call, String line) {
        System.out.println(call + "\t" + line);
    }

    private static void dump(String call, ResultSet rs) throws Exception {
        ResultSetMetaData meta = rs.getMetaData();
        int n = 0;
        while (rs.next()) {
            StringBuilder sb = new StringBuilder(call);
            for (int i = 1; i <= meta.getColumnCount(); i++) {
                sb.append('\t').append(meta.getColumnLabel(i)).append('=').append(rs.getString(i));
            }
            System.out.println(sb);
            n++;
        }
        System.out.println(call + "\t#rows=" + n);
        rs.close();
    }
}
