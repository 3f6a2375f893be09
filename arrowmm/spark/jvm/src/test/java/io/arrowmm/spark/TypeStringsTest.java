package io.arrowmm.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.arrow.flatbuf.Footer;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;

/**
 * {@link TypeStrings} gives pyarrow's {@code str()} of every type a statistics document names,
 * exactly: the expected strings are pyarrow's own, written by make_test_files.py into
 * {@code pyarrow_types.arrow} (a column of each type, its field metadata {@code expected}; the
 * decimal32 and decimal64 types, which Arrow Java reads from no file, in the schema's
 * metadata), and the schema is read by Arrow Java as the connector reads one.
 */
class TypeStringsTest {
  /** The schema of pyarrow's file, as Arrow Java reads a footer's (the connector's reading,
   * {@link StreamIndex#convertSchema}, without the column checks: the JVM connector reads no
   * time, list of views or interval column). */
  static Schema pyarrowTypes() throws IOException {
    byte[] file = Files.readAllBytes(Path.of(FileFooterTest.resource("pyarrow_types.arrow")));
    int length = ByteBuffer.wrap(file).order(ByteOrder.LITTLE_ENDIAN).getInt(file.length - 10);
    Footer footer = Footer.getRootAsFooter(
        ByteBuffer.wrap(file, file.length - 10 - length, length).slice()
            .order(ByteOrder.LITTLE_ENDIAN));
    return StreamIndex.convertSchema(footer.schema(), "pyarrow_types.arrow");
  }

  @Test
  void everyNamedTypeIsPyarrowsString() throws IOException {
    List<String> checked = new ArrayList<>();
    for (Field f : pyarrowTypes().getFields()) {
      String expected = f.getMetadata().get("expected");
      if (expected != null) {
        assertEquals(expected, TypeStrings.of(f), f.getName() + ": " + f);
        checked.add(expected);
      }
    }
    assertEquals(43, checked.size(), "every named column of make_test_files.py: " + checked);
    // the kinds the format lists, each at least once (extension columns: their storage's)
    for (String kind : new String[] {"int8", "uint64", "halffloat", "float", "double",
        "decimal128(38, 10)", "decimal256(76, 3)", "date32[day]", "date64[ms]", "time32[s]",
        "time32[ms]", "time64[us]", "time64[ns]", "timestamp[ns]",
        "timestamp[ms, tz=Europe/Paris]", "duration[us]", "bool", "string", "large_string",
        "string_view", "binary", "large_binary", "binary_view", "fixed_size_binary[3]",
        "fixed_size_binary[16]"}) {
      assertTrue(checked.contains(kind), kind);
    }
  }

  @Test
  void narrowDecimalsArePyarrowsStrings() throws IOException {
    JsonNode decimals = new ObjectMapper().readTree(
        pyarrowTypes().getCustomMetadata().get("decimals"));
    assertEquals(4, decimals.size());
    for (JsonNode d : decimals) {
      ArrowType t = new ArrowType.Decimal(d.get(1).asInt(), d.get(2).asInt(), d.get(0).asInt());
      assertEquals(d.get(3).asText(), TypeStrings.of(t), d.toString());
    }
  }

  @Test
  void typesNoDocumentNamesHaveNone() throws IOException {
    int unnamed = 0;
    for (Field f : pyarrowTypes().getFields()) {
      if (f.getName().startsWith("u")) {
        if (f.getType() instanceof ArrowType.Null) {  // (the writer records a null column's
          assertEquals("null", TypeStrings.of(f));    // null count: pyarrow's str(pa.null()))
        } else {
          assertNull(TypeStrings.of(f), f.toString());
        }
        unnamed++;
      }
    }
    assertEquals(5, unnamed);  // list, struct, dictionary of strings, null, interval
    // the dictionary's Field has its values' type in Arrow Java: still none
    assertEquals(new ArrowType.Utf8(), pyarrowTypes().findField("u2").getType());
    // widths Arrow has no such type of
    assertNull(TypeStrings.of(new ArrowType.Int(24, true)));
    assertNull(TypeStrings.of(new ArrowType.Decimal(10, 2, 96)));
    assertNull(TypeStrings.of(new ArrowType.Time(TimeUnit.SECOND, 64)));
    assertNull(TypeStrings.of(new ArrowType.Time(TimeUnit.NANOSECOND, 32)));
    assertNull(TypeStrings.of(new ArrowType.FixedSizeBinary(-1)));
    // an empty zone is no zone, as pyarrow prints it
    assertEquals("timestamp[us]", TypeStrings.of(new ArrowType.Timestamp(TimeUnit.MICROSECOND,
        "")));
  }
}
