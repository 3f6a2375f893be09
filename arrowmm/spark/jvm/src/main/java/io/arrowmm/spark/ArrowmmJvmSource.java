package io.arrowmm.spark;

import java.util.List;
import java.util.Map;

import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The JVM reader of arrowmm's Arrow IPC files: {@code spark.read.format("arrowmm_jvm")}.
 *
 * <p>Stage 1 of issue 16 reads only; the name {@code arrowmm} stays with the Python data source
 * (which also writes and streams) until this connector does all of that.
 */
public final class ArrowmmJvmSource implements TableProvider, DataSourceRegister {
  public static final String NAME = "arrowmm_jvm";

  @Override
  public String shortName() {
    return NAME;
  }

  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    List<String> files = DataFiles.resolve(DataFiles.loadPaths(options));
    if (files.isEmpty()) {
      throw new ArrowmmException("no Arrow file to infer a schema from in "
          + DataFiles.loadPaths(options));
    }
    return ColumnSpec.sparkSchema(FileFooter.read(files.get(0)).columns);
  }

  @Override
  public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> props) {
    return new ArrowmmTable(schema, props);
  }
}
