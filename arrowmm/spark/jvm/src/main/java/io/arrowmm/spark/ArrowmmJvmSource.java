package io.arrowmm.spark;

import java.util.List;
import java.util.Map;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SQLContext;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.sources.BaseRelation;
import org.apache.spark.sql.sources.CreatableRelationProvider;

import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The JVM connector for arrowmm's Arrow IPC files: {@code spark.read.format("arrowmm")} and
 * {@code df.write.format("arrowmm").mode(...).save(dir)} in a session with this jar (Spark
 * finds a JVM source's name before a Python source's, so the Python data source then answers
 * to {@code arrowmm_python} only); {@code arrowmm_jvm} ({@link ArrowmmJvmAlias}) always
 * reaches this connector.
 *
 * <p>Reads are DataSource V2 ({@link ArrowmmTable}), of a catalog table too (its
 * {@code LOCATION} is the path; its {@code INSERT}s are V2 writes).  Path writes come through
 * the V1 {@link CreatableRelationProvider} entry, because Spark lets a V2 {@code TableProvider}
 * be written only with append or overwrite: here the four save modes are decided (errorifexists
 * and ignore look at whether the path exists, as Spark's file sources do), and the rows are
 * then written by the V2 write of {@link ArrowmmWriteTable}.
 */
public class ArrowmmJvmSource implements TableProvider, DataSourceRegister,
    CreatableRelationProvider {
  public static final String NAME = "arrowmm";
  /** The name that always reaches the Python data source, in sessions with this jar too. */
  public static final String PYTHON_NAME = "arrowmm_python";
  /** Where Spark hands {@code partitionBy}'s columns (a JSON list) to a V1 write. */
  private static final String PARTITION_COLUMNS = "__partition_columns";

  @Override
  public String shortName() {
    return NAME;
  }

  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    org.apache.hadoop.conf.Configuration conf = PathResolver.hadoopConf(options);
    Map<String, Storage.Stat> files = DataFiles.resolve(DataFiles.loadPaths(options), conf);
    if (files.isEmpty()) {
      throw new ArrowmmException("no Arrow file to infer a schema from in "
          + DataFiles.loadPaths(options));
    }
    String first = files.keySet().iterator().next();
    return ColumnSpec.sparkSchema(
        FooterCache.read(Storage.of(first, conf), first, files.get(first)).columns);
  }

  /** True so that a write (which Spark plans through {@link #getTable} with the DataFrame's
   * schema before it falls back to {@link #createRelation}) needs no existing files; a read
   * with a user schema checks it against every file's. */
  @Override
  public boolean supportsExternalMetadata() {
    return true;
  }

  @Override
  public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> props) {
    if (partitioning.length > 0) {  // a write's partitionBy / bucketBy, a table's PARTITIONED BY
      List<String> asked = new java.util.ArrayList<>();
      for (Transform t : partitioning) {
        asked.add(t.describe());
      }
      refuseLayout("partitionBy / bucketBy / sortBy (PARTITIONED BY / CLUSTERED BY in SQL): "
          + asked);
    }
    if (ArrowmmTable.inCatalog(props) && !DataFiles.hasPath(props)) {
      throw new ArrowmmException("a table USING arrowmm needs a location: CREATE TABLE ... "
          + "USING arrowmm LOCATION '<dir>', or df.write.option('path', dir).saveAsTable(name) "
          + "(managed tables, kept in Spark's warehouse, are not supported)");
    }
    return new ArrowmmTable((StructType) ColumnSpec.nullable(schema), props);
  }

  /** A directory holds one flat set of files: a layout asked for is refused, never ignored. */
  private static void refuseLayout(String asked) {
    throw new ArrowmmException("the arrowmm JVM connector writes and reads unpartitioned, "
        + "unbucketed directories; " + asked + " is not supported (write without it)");
  }

  @Override
  public BaseRelation createRelation(SQLContext sqlContext, SaveMode mode,
      scala.collection.immutable.Map<String, String> parameters, Dataset<Row> data) {
    Map<String, String> options = scala.jdk.javaapi.CollectionConverters.asJava(parameters);
    String partitionColumns = options.get(PARTITION_COLUMNS);
    if (partitionColumns != null && !partitionColumns.replaceAll("[\\s\\[\\]]", "").isEmpty()) {
      refuseLayout("partitionBy(" + partitionColumns + ")");
    }
    org.apache.hadoop.conf.Configuration conf =
        PathResolver.hadoopConf(sqlContext.sparkSession(), options);
    // a path no filesystem serves is refused here: nothing written
    List<String> paths = PathResolver.resolve(
        DataFiles.givenPaths(options, DataFiles.NO_WRITE_PATH), conf);
    if (paths.size() != 1) {
      throw new ArrowmmException("a write needs one directory path, got " + paths);
    }
    String dir = paths.get(0);
    Storage storage = Storage.of(dir, conf);
    // the write below gets the resolved directory as a file: URI (local whatever session runs
    // it) or its qualified URI
    Map<String, String> resolved = new java.util.HashMap<>();
    for (Map.Entry<String, String> e : options.entrySet()) {
      if (!e.getKey().equalsIgnoreCase("path") && !e.getKey().equalsIgnoreCase("paths")
          && !e.getKey().equals(PARTITION_COLUMNS)) {
        resolved.put(e.getKey(), e.getValue());
      }
    }
    resolved.put("path", storage instanceof LocalStorage ? "file://" + dir : dir);
    boolean exists;
    try {
      storage.commitPrimitive(dir);  // a store that cannot commit atomically: refused first
      exists = storage.stat(dir) != null;
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(dir + ": " + e, e);
    }
    if (exists && mode == SaveMode.ErrorIfExists) {
      throw new ArrowmmException("[PATH_ALREADY_EXISTS] Path " + dir + " already exists. Set "
          + "mode as \"overwrite\" to overwrite the existing path, or \"append\" to add to it.");
    }
    if (!(exists && mode == SaveMode.Ignore)) {
      data.write().format(ArrowmmWriteTable.class.getName())
          .mode(mode == SaveMode.Overwrite ? SaveMode.Overwrite : SaveMode.Append)
          .options(resolved).save();
    }
    final StructType schema = data.schema();
    return new BaseRelation() {
      @Override
      public SQLContext sqlContext() {
        return sqlContext;
      }

      @Override
      public StructType schema() {
        return schema;
      }
    };
  }
}
