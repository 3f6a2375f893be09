package io.arrowmm.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;

import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;

/** The driver's Hadoop settings reach each task as written, built once per JVM, a copy per
 * task. */
class ShippedConfigurationTest {
  /** {@code shipped} as a task gets it: serialized and read back, as Spark sends a task. */
  private static ShippedConfiguration sent(ShippedConfiguration shipped) throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(shipped);
    }
    try (ObjectInputStream in = new ObjectInputStream(
        new ByteArrayInputStream(bytes.toByteArray()))) {
      return (ShippedConfiguration) in.readObject();
    }
  }

  @Test
  void tasksGetTheDriversSettingsEachAsACopyOfItsOwn() throws Exception {
    Configuration driver = new Configuration(false);
    driver.set("fs.defaultFS", "hdfs://nn.example:8020");
    driver.set("arrowmm.test.setting", "unique-" + System.nanoTime());
    ShippedConfiguration shipped = new ShippedConfiguration(driver);
    Configuration one = sent(shipped).value();
    Configuration two = sent(shipped).value();
    assertEquals("hdfs://nn.example:8020", one.get("fs.defaultFS"));
    assertEquals(driver.get("arrowmm.test.setting"), two.get("arrowmm.test.setting"));
    assertNotSame(one, two);
    one.set("fs.defaultFS", "file:///");  // a task's change stays its own
    one.set("arrowmm.test.other", "x");
    Configuration three = sent(shipped).value();
    assertEquals("hdfs://nn.example:8020", three.get("fs.defaultFS"));
    assertNull(three.get("arrowmm.test.other"));
  }

  @Test
  void oneJvmBuildsEachConfigurationOnceAndKeepsAFew() throws Exception {
    Configuration driver = new Configuration(false);
    driver.set("arrowmm.test.setting", "once-" + System.nanoTime());
    ShippedConfiguration shipped = new ShippedConfiguration(driver);
    sent(shipped).value();
    int kept = ShippedConfiguration.kept();
    for (int i = 0; i < 5; i++) {
      sent(shipped).value();  // the same settings: built already
    }
    assertEquals(kept, ShippedConfiguration.kept());
    for (int i = 0; i < 2 * ShippedConfiguration.KEPT; i++) {
      Configuration other = new Configuration(false);
      other.set("arrowmm.test.setting", "other-" + i + "-" + System.nanoTime());
      assertEquals(other.get("arrowmm.test.setting"),
          sent(new ShippedConfiguration(other)).value().get("arrowmm.test.setting"));
    }
    assertEquals(ShippedConfiguration.KEPT, ShippedConfiguration.kept());
  }
}
