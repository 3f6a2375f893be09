package io.arrowmm.spark;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The DataSource V2 write side, reached only through {@link ArrowmmJvmSource#createRelation}
 * (which decides what the four save modes mean, something Spark lets a V2 {@code TableProvider}
 * do only for append and overwrite) by its class name: not registered under a short name.
 */
public final class ArrowmmWriteTable implements TableProvider, SupportsWrite {
  private final StructType schema;
  private final Map<String, String> properties;

  public ArrowmmWriteTable() {
    this(new StructType(), Map.of());
  }

  private ArrowmmWriteTable(StructType schema, Map<String, String> properties) {
    this.schema = schema;
    this.properties = properties;
  }

  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    throw new ArrowmmException("io.arrowmm.spark.ArrowmmWriteTable only writes");
  }

  @Override
  public boolean supportsExternalMetadata() {
    return true;  // the DataFrame's schema: the directory may not exist yet
  }

  @Override
  public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> props) {
    return new ArrowmmWriteTable(schema, props);
  }

  @Override
  public String name() {
    return ArrowmmJvmSource.NAME + " write " + DataFiles.savePaths(properties);
  }

  @Override
  @SuppressWarnings("deprecation")
  public StructType schema() {
    return schema;
  }

  @Override
  public Set<TableCapability> capabilities() {
    return EnumSet.of(TableCapability.BATCH_WRITE, TableCapability.TRUNCATE);
  }

  @Override
  public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
    return new ArrowmmWrite(properties, info);
  }
}
