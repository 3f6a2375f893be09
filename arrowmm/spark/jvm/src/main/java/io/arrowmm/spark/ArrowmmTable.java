package io.arrowmm.spark;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownFilters;
import org.apache.spark.sql.connector.read.SupportsPushDownLimit;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The files of one load path, as a table that can be read in batches and by micro-batches
 * ({@link ArrowmmMicroBatchStream}) and written by a Structured Streaming query.  (Batch writes
 * of a path go through {@link ArrowmmJvmSource#createRelation}: no BATCH_WRITE here, so that
 * Spark hands every save mode to it.)  A catalog table's ({@code CREATE TABLE ... USING
 * arrowmm LOCATION}, {@code saveAsTable}) files are its location's, and it takes batch writes
 * ({@code INSERT INTO}, {@code INSERT OVERWRITE}) through the same commit protocol.
 */
final class ArrowmmTable implements SupportsRead, SupportsWrite {
  private final StructType schema;
  private final Map<String, String> properties;

  ArrowmmTable(StructType schema, Map<String, String> properties) {
    this.schema = schema;
    this.properties = properties;
    if (DataFiles.hasPath(properties)) {  // none: the read or the write says what to give
      DataFiles.loadPaths(properties);  // a path of another filesystem is refused here
    }
  }

  /** Whether Spark's session catalog made the table (it hands a table its reserved property
   * {@code provider}; a load(...) or save(...) call's options have none). */
  static boolean inCatalog(Map<String, String> properties) {
    return properties.containsKey(
        org.apache.spark.sql.connector.catalog.TableCatalog.PROP_PROVIDER);
  }

  @Override
  public String name() {
    return ArrowmmJvmSource.NAME + " " + (DataFiles.hasPath(properties)
        ? DataFiles.loadPaths(properties) : "(no path)");
  }

  @Override
  @SuppressWarnings("deprecation")
  public StructType schema() {
    return schema;
  }

  @Override
  public Set<TableCapability> capabilities() {
    Set<TableCapability> can = EnumSet.of(TableCapability.BATCH_READ,
        TableCapability.MICRO_BATCH_READ, TableCapability.STREAMING_WRITE);
    if (inCatalog(properties)) {
      can.add(TableCapability.BATCH_WRITE);
      can.add(TableCapability.TRUNCATE);
    }
    return can;
  }

  @Override
  public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
    return new ArrowmmWrite(properties, info);
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    // a catalog table's path is its property, not a read option
    Map<String, String> merged = new java.util.HashMap<>(properties);
    merged.putAll(options.asCaseSensitiveMap());
    return new Builder(schema, new CaseInsensitiveStringMap(merged));
  }

  /**
   * Column pruning: the scan reads (and validates) only the columns Spark asks for.  Filters:
   * the scan skips the record batches the footer statistics exclude, and hands every filter
   * back to Spark, which checks the rows it reads (so the answer never depends on the
   * statistics).  Limit: the scan reads the first batches holding that many rows; Spark still
   * applies the limit.  Spark makes a new builder for each query it plans, so what one query
   * pushed never narrows another query on the same DataFrame.
   */
  static final class Builder implements ScanBuilder, SupportsPushDownRequiredColumns,
      SupportsPushDownFilters, SupportsPushDownLimit {
    private final StructType schema;
    private final CaseInsensitiveStringMap options;
    private StructType required;
    private Filter[] filters = new Filter[0];
    private int limit = -1;

    Builder(StructType schema, CaseInsensitiveStringMap options) {
      this.schema = schema;
      this.options = options;
      this.required = schema;
    }

    @Override
    public void pruneColumns(StructType requiredSchema) {
      // top-level pruning only: Spark may hand a struct, array or map column narrowed to the
      // nested fields a query uses, but the reader's vectors hold every field in file order, so
      // each kept column keeps its full type (Spark projects the nested fields itself)
      org.apache.spark.sql.types.StructField[] kept = requiredSchema.fields().clone();
      for (int i = 0; i < kept.length; i++) {
        for (org.apache.spark.sql.types.StructField full : schema.fields()) {
          if (full.name().equals(kept[i].name())) {
            kept[i] = full;
            break;
          }
        }
      }
      this.required = new StructType(kept);
    }

    @Override
    public Filter[] pushFilters(Filter[] pushed) {
      this.filters = pushed.clone();
      return pushed;  // all post-scan: statistics skip batches, Spark still checks every row
    }

    @Override
    public Filter[] pushedFilters() {
      return ArrowmmScan.usableFilters(schema, filters);
    }

    @Override
    public boolean pushLimit(int n) {
      this.limit = n;
      return true;
    }

    @Override
    public boolean isPartiallyPushed() {
      return true;  // a batch range holds more rows than the limit: Spark keeps its Limit
    }

    @Override
    public Scan build() {
      return new ArrowmmScan(schema, required, options, filters, limit);
    }
  }
}
