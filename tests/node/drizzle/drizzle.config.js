// drizzle-kit's configuration: the database is given by DRIZZLE_URL (the test's server).
module.exports = {
  dialect: "postgresql",
  schema: __dirname + "/schema.js",
  dbCredentials: { url: process.env.DRIZZLE_URL },
  tablesFilter: ["dz_*"],
};
