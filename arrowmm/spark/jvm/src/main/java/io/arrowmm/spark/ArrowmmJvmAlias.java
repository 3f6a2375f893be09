package io.arrowmm.spark;

/**
 * The JVM connector under the name {@code arrowmm_jvm}, which always reaches it (the name of its
 * first stage, kept working): the same source as {@code arrowmm}, registered a second time.
 */
public final class ArrowmmJvmAlias extends ArrowmmJvmSource {
  public static final String ALIAS = "arrowmm_jvm";

  @Override
  public String shortName() {
    return ALIAS;
  }
}
