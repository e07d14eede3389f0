// The Vulkan backend's device: instance, the chosen physical device, one compute queue, and the
// features the kernels use (16-bit storage, fp16 arithmetic, 8-bit storage, subgroup size,
// cooperative matrices), queried and reported. Vulkan-Hpp's exceptions and result codes stop here:
// everything public returns infer's Status / Result with a message naming the device and the call.
#pragma once

#include <fmt/format.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <infer/status.hpp>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#endif
#include <vulkan/vulkan_raii.hpp>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

namespace infer::vk {

/// What a device offers the kernels.
struct DeviceInfo {
  std::uint32_t index = 0;  ///< among the instance's physical devices
  std::string name;
  std::string kind;  ///< "discrete", "integrated", "virtual", "cpu", "other"
  std::uint32_t api_version = 0;
  std::uint32_t vendor_id = 0;
  bool fp16_storage = false;            ///< storageBuffer16BitAccess
  bool fp16_arithmetic = false;         ///< shaderFloat16
  bool int8_storage = false;            ///< storageBuffer8BitAccess
  bool cooperative_matrix_ext = false;  ///< VK_NV_cooperative_matrix is offered
  /// The convolution's tensor-core path can run: the extension, 16x16x16 fp16 products with f32
  /// accumulators at subgroup scope, 32-wide subgroups and fp16 arithmetic (and not turned off).
  bool cooperative_matrix = false;
  std::string cooperative_shapes;  ///< the MxNxK A/B/C types the device lists, for reports
  std::uint32_t subgroup_size = 0;
  /// Streaming multiprocessors (VK_NV_shader_sm_builtins); 0 where the device does not say. The
  /// GEMM convolution sizes its K split to give each several workgroups.
  std::uint32_t compute_units = 0;
  std::uint32_t max_shared_memory = 0;  ///< bytes per workgroup
  std::uint32_t max_workgroup_invocations = 0;
  std::uint64_t device_local_bytes = 0;  ///< the largest device-local heap
  float timestamp_period = 0.f;  ///< nanoseconds per timestamp tick (0: no compute timestamps)
  bool pipeline_executable_ext = false;  ///< VK_KHR_pipeline_executable_properties is offered
  /// Pipelines keep their compiler's statistics (registers, shared memory, as the driver names
  /// them): DeviceChoice::pipeline_statistics on a device that offers the extension.
  bool pipeline_statistics = false;

  /// One line: name, kind and the features.
  std::string describe() const {
    return fmt::format(
        "{} ({}, Vulkan {}.{}): fp16 storage {}, fp16 arithmetic {}, int8 storage {}, "
        "cooperative matrix {}{}, subgroup {}, {} compute units, shared memory {} KB, {} MB "
        "device-local",
        name, kind, VK_API_VERSION_MAJOR(api_version), VK_API_VERSION_MINOR(api_version),
        fp16_storage ? "yes" : "no", fp16_arithmetic ? "yes" : "no", int8_storage ? "yes" : "no",
        cooperative_matrix       ? "in use"
        : cooperative_matrix_ext ? "offered, not used"
                                 : "no",
        cooperative_shapes.empty() ? "" : " (" + cooperative_shapes + ")", subgroup_size,
        compute_units ? fmt::format("{}", compute_units) : std::string("unknown"),
        max_shared_memory / 1024, device_local_bytes >> 20);
  }
};

/// Which device: an index among the physical devices, or the best one (discrete GPU first, then
/// integrated, virtual, then CPU implementations such as lavapipe).
struct DeviceChoice {
  std::optional<std::uint32_t> index;
  /// Whether the kernels may use cooperative matrices where the device has them; off, every
  /// convolution takes the FMA path (to compare the two, or to rule one out). The environment
  /// variable INFER_VULKAN_COOPMAT=0 turns it off for every device a program opens.
  bool cooperative_matrix = true;
  /// Whether pipelines capture their compiler's statistics (VK_KHR_pipeline_executable_properties,
  /// where the device offers it; Pipeline::statistics): for benchmarks that report a kernel's
  /// registers and occupancy. Off by default (the driver then keeps nothing extra).
  bool pipeline_statistics = false;
};

/// Runs `f` (Vulkan-Hpp calls) and turns what it throws into an Error naming `what`.
template <class F>
Status guard(std::string_view what, F&& f) {
  try {
    f();
    return {};
  } catch (const ::vk::SystemError& e) {
    return make_error("Vulkan: {}: {}", what, e.what());
  } catch (const std::exception& e) {
    return make_error("Vulkan: {}: {}", what, e.what());
  }
}

namespace testing {
/// A fault a test makes happen at the backend's edge, where a software device cannot produce it:
/// while set, every submit reports the device lost, as vkQueueSubmit does (VK_ERROR_DEVICE_LOST).
inline std::atomic<bool>& device_lost() {
  static std::atomic<bool> on{false};
  return on;
}
}  // namespace testing

/// A Vulkan device with one compute queue. Not copyable; share it by reference.
class Context {
 public:
  /// Creates the instance and the device. No loader, no device, or no compute queue is an error
  /// saying which.
  static Result<std::unique_ptr<Context>> create(DeviceChoice choice = {}) {
    auto ctx = std::unique_ptr<Context>(new Context());
    INFER_TRY(ctx->init(choice));
    return ctx;
  }
  /// Every physical device the loader lists, described (empty when none or no loader).
  static Result<std::vector<DeviceInfo>> list_devices() {
    std::vector<DeviceInfo> out;
    Status s = guard("listing devices", [&] {
      ::vk::raii::PhysicalDevices devices(instance());
      for (std::uint32_t i = 0; i < devices.size(); ++i) out.push_back(query(devices[i], i));
    });
    INFER_TRY(s);
    return out;
  }

  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const DeviceInfo& info() const { return info_; }
  const ::vk::raii::Device& device() const { return *device_; }
  const ::vk::raii::PhysicalDevice& physical() const { return *physical_; }
  const ::vk::raii::Queue& queue() const { return *queue_; }
  /// Held while submitting: a queue takes one submit at a time (contexts of one network run on
  /// several threads).
  std::mutex& queue_mutex() const { return queue_mutex_; }

  std::uint32_t queue_family() const { return family_; }

  /// The index of a memory type with `required` properties among `type_bits`; nullopt if none.
  std::optional<std::uint32_t> memory_type(std::uint32_t type_bits,
                                           ::vk::MemoryPropertyFlags required) const {
    const auto mp = physical_->getMemoryProperties();
    for (std::uint32_t i = 0; i < mp.memoryTypeCount; ++i)
      if ((type_bits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & required) == required)
        return i;
    return std::nullopt;
  }

 private:
  Context() = default;

  /// The Vulkan loader and one instance on it, made on first use and kept for the life of the
  /// process (never destroyed: a Context made while statics are destroyed still finds them); every
  /// Context makes its device on this instance. The loader unloads the driver when its last
  /// instance goes, so an instance per Context loaded and unloaded the driver with each network:
  /// an NVIDIA driver (580, on an H200) then refused a later instance (ErrorIncompatibleDriver)
  /// after seven to nine networks opened and closed in one infer-bench run, and keeping the loader
  /// alone (the instances still came and went) did not stop it. Throws where there is no loader or
  /// no instance (guard() turns that into a Status); a later call tries again.
  static const ::vk::raii::Instance& instance() {
    static const ::vk::raii::Context* loader = new ::vk::raii::Context();
    static const ::vk::raii::Instance* made = [] {
      const ::vk::ApplicationInfo app("infer", 1, "infer", 1, VK_API_VERSION_1_1);
      const ::vk::InstanceCreateInfo ci({}, &app);
      return new ::vk::raii::Instance(*loader, ci);
    }();
    return *made;
  }

  static DeviceInfo query(const ::vk::raii::PhysicalDevice& pd, std::uint32_t index) {
    DeviceInfo d;
    d.index = index;
    const auto props = pd.getProperties();
    d.name = props.deviceName.data();
    d.api_version = props.apiVersion;
    d.vendor_id = props.vendorID;
    switch (props.deviceType) {
      case ::vk::PhysicalDeviceType::eDiscreteGpu:
        d.kind = "discrete";
        break;
      case ::vk::PhysicalDeviceType::eIntegratedGpu:
        d.kind = "integrated";
        break;
      case ::vk::PhysicalDeviceType::eVirtualGpu:
        d.kind = "virtual";
        break;
      case ::vk::PhysicalDeviceType::eCpu:
        d.kind = "cpu";
        break;
      default:
        d.kind = "other";
    }
    d.max_shared_memory = props.limits.maxComputeSharedMemorySize;
    if (props.limits.timestampComputeAndGraphics) d.timestamp_period = props.limits.timestampPeriod;
    d.max_workgroup_invocations = props.limits.maxComputeWorkGroupInvocations;
    const auto chain =
        pd.getFeatures2<::vk::PhysicalDeviceFeatures2, ::vk::PhysicalDevice16BitStorageFeatures,
                        ::vk::PhysicalDevice8BitStorageFeatures,
                        ::vk::PhysicalDeviceShaderFloat16Int8Features>();
    d.fp16_storage = chain.get<::vk::PhysicalDevice16BitStorageFeatures>().storageBuffer16BitAccess;
    d.int8_storage = chain.get<::vk::PhysicalDevice8BitStorageFeatures>().storageBuffer8BitAccess;
    d.fp16_arithmetic = chain.get<::vk::PhysicalDeviceShaderFloat16Int8Features>().shaderFloat16;
    const auto sub = pd.getProperties2<::vk::PhysicalDeviceProperties2,
                                       ::vk::PhysicalDeviceSubgroupProperties>();
    d.subgroup_size = sub.get<::vk::PhysicalDeviceSubgroupProperties>().subgroupSize;
    bool sm_builtins = false;
    for (const auto& e : pd.enumerateDeviceExtensionProperties()) {
      const std::string_view ext(e.extensionName.data());
      if (ext == VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME) d.cooperative_matrix_ext = true;
      if (ext == VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME) sm_builtins = true;
      if (ext == VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME)
        d.pipeline_executable_ext = true;
    }
    if (sm_builtins) {
      const auto sm = pd.getProperties2<::vk::PhysicalDeviceProperties2,
                                        ::vk::PhysicalDeviceShaderSMBuiltinsPropertiesNV>();
      d.compute_units = sm.get<::vk::PhysicalDeviceShaderSMBuiltinsPropertiesNV>().shaderSMCount;
    }
    if (d.cooperative_matrix_ext) {
      bool f16_16x16x16 = false;
      auto type = [](::vk::ComponentTypeNV t) {
        return t == ::vk::ComponentTypeNV::eFloat16   ? "f16"
               : t == ::vk::ComponentTypeNV::eFloat32 ? "f32"
               : t == ::vk::ComponentTypeNV::eSint8   ? "s8"
               : t == ::vk::ComponentTypeNV::eSint32  ? "s32"
               : t == ::vk::ComponentTypeNV::eUint8   ? "u8"
                                                      : "other";
      };
      try {
        for (const auto& c : pd.getCooperativeMatrixPropertiesNV()) {
          if (c.scope != ::vk::ScopeNV::eSubgroup) continue;
          d.cooperative_shapes +=
              fmt::format("{}{}x{}x{} {}*{}+{}", d.cooperative_shapes.empty() ? "" : ", ", c.MSize,
                          c.NSize, c.KSize, type(c.AType), type(c.BType), type(c.CType));
          if (c.MSize == 16 && c.NSize == 16 && c.KSize == 16 &&
              c.AType == ::vk::ComponentTypeNV::eFloat16 &&
              c.BType == ::vk::ComponentTypeNV::eFloat16 &&
              c.CType == ::vk::ComponentTypeNV::eFloat32 &&
              c.DType == ::vk::ComponentTypeNV::eFloat32)
            f16_16x16x16 = true;
        }
      } catch (const ::vk::SystemError&) {
        f16_16x16x16 = false;  // the query failed: the path is not used
      }
      const auto coop = pd.getFeatures2<::vk::PhysicalDeviceFeatures2,
                                        ::vk::PhysicalDeviceCooperativeMatrixFeaturesNV>();
      d.cooperative_matrix =
          f16_16x16x16 && d.subgroup_size == 32 && d.fp16_arithmetic && d.fp16_storage &&
          coop.get<::vk::PhysicalDeviceCooperativeMatrixFeaturesNV>().cooperativeMatrix;
    }
    const auto mem = pd.getMemoryProperties();
    for (std::uint32_t h = 0; h < mem.memoryHeapCount; ++h)
      if (mem.memoryHeaps[h].flags & ::vk::MemoryHeapFlagBits::eDeviceLocal)
        d.device_local_bytes =
            std::max<std::uint64_t>(d.device_local_bytes, mem.memoryHeaps[h].size);
    return d;
  }

  static int rank(const DeviceInfo& d) {
    if (d.kind == "discrete") return 0;
    if (d.kind == "integrated") return 1;
    if (d.kind == "virtual") return 2;
    if (d.kind == "cpu") return 3;
    return 4;
  }

  Status init(DeviceChoice choice) {
    const ::vk::raii::Instance* shared = nullptr;
    INFER_TRY(guard("creating the instance (is a Vulkan loader, libvulkan1, installed?)",
                    [&] { shared = &instance(); }));
    std::vector<DeviceInfo> infos;
    std::unique_ptr<::vk::raii::PhysicalDevices> devices;
    INFER_TRY(guard("listing devices", [&] {
      devices = std::make_unique<::vk::raii::PhysicalDevices>(*shared);
      for (std::uint32_t i = 0; i < devices->size(); ++i) infos.push_back(query((*devices)[i], i));
    }));
    if (infos.empty())
      return make_error(
          "Vulkan: no device (the loader lists none; is a driver such as Mesa's "
          "lavapipe, mesa-vulkan-drivers, installed?)");
    std::size_t pick = 0;
    if (choice.index) {
      if (*choice.index >= infos.size())
        return make_error("Vulkan: device {} asked for, the loader lists {} ({})", *choice.index,
                          infos.size(), names(infos));
      pick = *choice.index;
    } else {
      for (std::size_t i = 1; i < infos.size(); ++i)
        if (rank(infos[i]) < rank(infos[pick])) pick = i;
    }
    info_ = infos[pick];
    const char* env = std::getenv("INFER_VULKAN_COOPMAT");
    if (!choice.cooperative_matrix || (env && std::string_view(env) == "0"))
      info_.cooperative_matrix = false;
    physical_ = std::make_unique<::vk::raii::PhysicalDevice>(std::move((*devices)[pick]));
    // One queue family with compute.
    const auto families = physical_->getQueueFamilyProperties();
    bool found = false;
    for (std::uint32_t f = 0; f < families.size() && !found; ++f)
      if (families[f].queueFlags & ::vk::QueueFlagBits::eCompute) {
        family_ = f;
        found = true;
      }
    if (!found) return make_error("Vulkan: {} has no compute queue", info_.name);
    return guard(fmt::format("creating the device on {}", info_.name), [&] {
      const float priority = 1.f;
      const ::vk::DeviceQueueCreateInfo qci({}, family_, 1, &priority);
      ::vk::StructureChain<::vk::DeviceCreateInfo, ::vk::PhysicalDeviceFeatures2,
                           ::vk::PhysicalDevice16BitStorageFeatures,
                           ::vk::PhysicalDevice8BitStorageFeatures,
                           ::vk::PhysicalDeviceShaderFloat16Int8Features,
                           ::vk::PhysicalDeviceCooperativeMatrixFeaturesNV,
                           ::vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR>
          chain;
      chain.get<::vk::DeviceCreateInfo>().setQueueCreateInfos(qci);
      std::vector<const char*> extensions;
      if (info_.cooperative_matrix) {
        extensions.push_back(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
        chain.get<::vk::PhysicalDeviceCooperativeMatrixFeaturesNV>().cooperativeMatrix = true;
      } else {
        chain.unlink<::vk::PhysicalDeviceCooperativeMatrixFeaturesNV>();
      }
      info_.pipeline_statistics = choice.pipeline_statistics && info_.pipeline_executable_ext;
      if (info_.pipeline_statistics) {
        extensions.push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
        chain.get<::vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR>()
            .pipelineExecutableInfo = true;
      } else {
        chain.unlink<::vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR>();
      }
      chain.get<::vk::DeviceCreateInfo>().setPEnabledExtensionNames(extensions);
      chain.get<::vk::PhysicalDevice16BitStorageFeatures>().storageBuffer16BitAccess =
          info_.fp16_storage;
      chain.get<::vk::PhysicalDevice8BitStorageFeatures>().storageBuffer8BitAccess =
          info_.int8_storage;
      chain.get<::vk::PhysicalDeviceShaderFloat16Int8Features>().shaderFloat16 =
          info_.fp16_arithmetic;
      device_ =
          std::make_unique<::vk::raii::Device>(*physical_, chain.get<::vk::DeviceCreateInfo>());
      queue_ = std::make_unique<::vk::raii::Queue>(*device_, family_, 0);
    });
  }

  static std::string names(const std::vector<DeviceInfo>& infos) {
    std::string s;
    for (const auto& d : infos)
      s += fmt::format("{}{}: {}", s.empty() ? "" : ", ", d.index, d.name);
    return s;
  }

  // Destroyed in reverse: queue, device, physical device (the instance stays: instance()).
  std::unique_ptr<::vk::raii::PhysicalDevice> physical_;
  std::unique_ptr<::vk::raii::Device> device_;
  std::unique_ptr<::vk::raii::Queue> queue_;
  mutable std::mutex queue_mutex_;
  std::uint32_t family_ = 0;
  DeviceInfo info_;
};

}  // namespace infer::vk
