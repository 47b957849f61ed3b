import java.sql.*;
import java.util.*;

/** Every DatabaseMetaData call a BI tool or IDE makes on connect and on browsing a
 *  schema (DBeaver, DataGrip, Metabase and SQuirreL all go through these), printed as
 *  "call<TAB>column=value..." lines, one a row, so the output against hatiproxy can be
 *  compared with PostgreSQL 15's. Args: JDBC URL, schema. */
public class JdbcMetadata {
    static Connection conn;

    public static void main(String[] args) throws Exception {
        conn = DriverManager.getConnection(args[0]);
        String s = args[1];
        DatabaseMetaData md = conn.getMetaData();
        dump("getTables", () -> md.getTables(null, s, "%", null));
        dump("getTables.TABLE", () -> md.getTables(null, s, "%", new String[] {"TABLE"}));
        dump("getTables.VIEW", () -> md.getTables(null, s, "%", new String[] {"VIEW"}));
        dump("getColumns", () -> md.getColumns(null, s, "%", "%"));
        for (String t : new String[] {"parent", "child", "kinds"}) {
            dump("getPrimaryKeys." + t, () -> md.getPrimaryKeys(null, s, t));
            dump("getImportedKeys." + t, () -> md.getImportedKeys(null, s, t));
            dump("getExportedKeys." + t, () -> md.getExportedKeys(null, s, t));
            dump("getIndexInfo." + t, () -> md.getIndexInfo(null, s, t, false, true));
            dump("getIndexInfo.unique." + t, () -> md.getIndexInfo(null, s, t, true, true));
            dump("getBestRowIdentifier." + t,
                () -> md.getBestRowIdentifier(null, s, t, DatabaseMetaData.bestRowSession, true));
            dump("getVersionColumns." + t, () -> md.getVersionColumns(null, s, t));
        }
        dump("getCrossReference", () -> md.getCrossReference(null, s, "parent", null, s, "child"));
        dump("getSchemas.pattern", () -> md.getSchemas(null, s));
        dump("getTableTypes", md::getTableTypes);
        dump("getCatalogs", md::getCatalogs);
        dump("getClientInfoProperties", md::getClientInfoProperties);
        dump("getUDTs", () -> md.getUDTs(null, s, "%", null));
        dump("getSuperTypes", () -> md.getSuperTypes(null, s, "%"));
        dump("getSuperTables", () -> md.getSuperTables(null, s, "%"));
        dump("getAttributes", () -> md.getAttributes(null, s, "%", "%"));
        dump("getPseudoColumns", () -> md.getPseudoColumns(null, s, "%", "%"));
        dump("getTablePrivileges", () -> md.getTablePrivileges(null, s, "parent"));
        dump("getColumnPrivileges", () -> md.getColumnPrivileges(null, s, "parent", "%"));
        dump("getFunctions", () -> md.getFunctions(null, s, "%"));
        dump("getProcedures", () -> md.getProcedures(null, s, "%"));
        dump("getFunctionColumns", () -> md.getFunctionColumns(null, s, "%", "%"));
        dump("getProcedureColumns", () -> md.getProcedureColumns(null, s, "%", "%"));
        typeInfo(md);
        scalars(md);
        resultMeta(s);
        System.out.println("done");
    }

    interface Call { ResultSet run() throws SQLException; }

    /** Every column of every row, by label; errors as a line of their own. */
    static void dump(String name, Call call) {
        try (ResultSet rs = call.run()) {
            ResultSetMetaData rm = rs.getMetaData();
            int rows = 0;
            while (rs.next()) {
                StringBuilder b = new StringBuilder(name);
                for (int i = 1; i <= rm.getColumnCount(); i++) {
                    b.append('\t').append(rm.getColumnLabel(i).toUpperCase()).append('=')
                        .append(rs.getString(i));
                }
                System.out.println(b);
                rows++;
            }
            System.out.println(name + "\t#rows=" + rows);
        } catch (SQLException e) {
            System.out.println(name + "\tERROR " + e.getSQLState() + " "
                + String.valueOf(e.getMessage()).replace('\n', ' '));
            try { if (!conn.getAutoCommit()) conn.rollback(); } catch (SQLException ignored) { }
        }
    }

    /** getTypeInfo: the common types' JDBC mapping (the full list differs by extensions). */
    static void typeInfo(DatabaseMetaData md) {
        Set<String> common = new HashSet<>(Arrays.asList("int2", "int4", "int8", "numeric",
            "float4", "float8", "bool", "text", "varchar", "bpchar", "date", "timestamp",
            "timestamptz", "time", "interval", "bytea", "uuid", "json", "jsonb", "_int4",
            "_text", "oid", "name"));
        try (ResultSet rs = md.getTypeInfo()) {
            List<String> out = new ArrayList<>();
            while (rs.next()) {
                String t = rs.getString("TYPE_NAME");
                if (common.contains(t)) {
                    out.add("getTypeInfo\t" + t + " DATA_TYPE=" + rs.getInt("DATA_TYPE")
                        + " PRECISION=" + rs.getInt("PRECISION")
                        + " NULLABLE=" + rs.getInt("NULLABLE")
                        + " CASE_SENSITIVE=" + rs.getBoolean("CASE_SENSITIVE")
                        + " SEARCHABLE=" + rs.getInt("SEARCHABLE")
                        + " UNSIGNED=" + rs.getBoolean("UNSIGNED_ATTRIBUTE")
                        + " AUTO_INCREMENT=" + rs.getBoolean("AUTO_INCREMENT"));
                }
            }
            Collections.sort(out);
            out.forEach(System.out::println);
        } catch (SQLException e) {
            System.out.println("getTypeInfo\tERROR " + e.getSQLState() + " " + e.getMessage());
        }
    }

    interface Scalar { Object run() throws SQLException; }

    static void scalar(String name, Scalar s) {
        try {
            System.out.println("scalar\t" + name + "=" + s.run());
        } catch (SQLException e) {
            System.out.println("scalar\t" + name + " ERROR " + e.getSQLState());
        }
    }

    static void scalars(DatabaseMetaData md) {
        scalar("getDatabaseProductName", md::getDatabaseProductName);
        scalar("getDatabaseMajorVersion", md::getDatabaseMajorVersion);
        scalar("getUserName", md::getUserName);
        scalar("getIdentifierQuoteString", md::getIdentifierQuoteString);
        scalar("getSearchStringEscape", md::getSearchStringEscape);
        scalar("getDefaultTransactionIsolation", md::getDefaultTransactionIsolation);
        scalar("supportsTransactions", md::supportsTransactions);
        scalar("getMaxNameLength", md::getMaxColumnNameLength);
        scalar("getSQLKeywords", () -> md.getSQLKeywords().length() > 0);
        scalar("getSchemaTerm", md::getSchemaTerm);
        scalar("isReadOnly", md::isReadOnly);
        scalar("getCatalog", conn::getCatalog);
        scalar("getSchema", conn::getSchema);
        scalar("getTransactionIsolation", conn::getTransactionIsolation);
    }

    /** What a result grid shows for each column (DBeaver / DataGrip read these). */
    static void resultMeta(String s) {
        try (Statement st = conn.createStatement();
             ResultSet rs = st.executeQuery("SELECT k.*, k.id + 1 AS nxt, upper(k.by::text) AS up FROM "
                 + s + ".kinds k")) {
            ResultSetMetaData rm = rs.getMetaData();
            for (int i = 1; i <= rm.getColumnCount(); i++) {
                System.out.println("resultMeta\t" + rm.getColumnLabel(i)
                    + " type=" + rm.getColumnType(i) + " typeName=" + rm.getColumnTypeName(i)
                    + " class=" + rm.getColumnClassName(i)
                    + " precision=" + rm.getPrecision(i) + " scale=" + rm.getScale(i)
                    + " displaySize=" + rm.getColumnDisplaySize(i)
                    + " nullable=" + rm.isNullable(i) + " autoIncrement=" + rm.isAutoIncrement(i)
                    + " signed=" + rm.isSigned(i) + " caseSensitive=" + rm.isCaseSensitive(i)
                    + " table=" + rm.getTableName(i) + " schema=" + rm.getSchemaName(i));
            }
        } catch (SQLException e) {
            System.out.println("resultMeta\tERROR " + e.getSQLState() + " " + e.getMessage());
        }
    }
}
