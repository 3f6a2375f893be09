package io.arrowmm.spark;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/** The files of one load path, as a table that can be read in batches. */
final class ArrowmmTable implements SupportsRead {
  private final StructType schema;
  private final Map<String, String> properties;

  ArrowmmTable(StructType schema, Map<String, String> properties) {
    this.schema = schema;
    this.properties = properties;
  }

  @Override
  public String name() {
    return ArrowmmJvmSource.NAME + " " + DataFiles.loadPaths(properties);
  }

  @Override
  @SuppressWarnings("deprecation")
  public StructType schema() {
    return schema;
  }

  @Override
  public Set<TableCapability> capabilities() {
    return EnumSet.of(TableCapability.BATCH_READ);
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    return new Builder(schema, options);
  }

  /** Column pruning: the scan reads (and validates) only the columns Spark asks for. */
  static final class Builder implements ScanBuilder, SupportsPushDownRequiredColumns {
    private final StructType schema;
    private final CaseInsensitiveStringMap options;
    private StructType required;

    Builder(StructType schema, CaseInsensitiveStringMap options) {
      this.schema = schema;
      this.options = options;
      this.required = schema;
    }

    @Override
    public void pruneColumns(StructType requiredSchema) {
      this.required = requiredSchema;
    }

    @Override
    public Scan build() {
      return new ArrowmmScan(schema, required, options);
    }
  }
}
