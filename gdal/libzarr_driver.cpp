// gdal_LIBZARR.so: a GDAL driver plugin that reads Zarr v2 and v3 arrays (sharded ones too)
// through libzarr, so that a GDAL without final Zarr v3 (Debian 12's 3.6) opens them.
//
//   gdalinfo 'LIBZARR:"data.zarr":measurements/temperature'   (any location libzarr opens:
//   gdalinfo data.zarr/temperature       (a Zarr v3 array)      s3://, https://, a .zip ...)
//
// A 2-D array [rows, columns] is one band; a 3-D array [bands, rows, columns] one band per
// index of its first dimension. Blocks are the array's (inner) chunks, read straight into
// GDAL's block buffer with libzarr's buffer strides; the fill value is the band's nodata value.
// Load it with GDAL_DRIVER_PATH set to its directory.

#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cpl_string.h"
#include "cpl_vsi.h"
#include "gdal_pam.h"
#include "gdal_priv.h"

#include "zarr.h"

namespace {

constexpr const char *kPrefix = "LIBZARR:";

// Where a dataset name points: the store's location and the array's path in it.
struct Target {
    std::string location;
    std::string path;
};

// `LIBZARR:"LOCATION":PATH`, `LIBZARR:LOCATION` (an array at the store's root), or a local
// directory holding a v3 array (`PARENT/NAME` opens the store PARENT, array NAME).
bool ParseTarget(const char *name, Target &target) {
    if (STARTS_WITH_CI(name, kPrefix)) {
        std::string rest(name + strlen(kPrefix));
        if (!rest.empty() && rest[0] == '"') {
            size_t close = rest.find('"', 1);
            if (close == std::string::npos) return false;
            target.location = rest.substr(1, close - 1);
            target.path = close + 1 < rest.size() && rest[close + 1] == ':' ? rest.substr(close + 2) : "";
        } else {
            target.location = rest;
            target.path = "";
        }
        return !target.location.empty();
    }
    std::string dir(name);
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    size_t slash = dir.rfind('/');
    target.location = slash == std::string::npos ? "." : dir.substr(0, slash == 0 ? 1 : slash);
    target.path = slash == std::string::npos ? dir : dir.substr(slash + 1);
    return true;
}

// The GDAL type of libzarr's `kind` of `itemsize` bytes, GDT_Unknown when GDAL has none.
GDALDataType GdalType(zarr_dtype_kind kind, size_t itemsize, bool &signed_byte) {
    signed_byte = false;
    switch (kind) {
    case ZARR_DTYPE_BOOL:
        return GDT_Byte;
    case ZARR_DTYPE_UINT:
        return itemsize == 1   ? GDT_Byte
               : itemsize == 2 ? GDT_UInt16
               : itemsize == 4 ? GDT_UInt32
                               : GDT_UInt64;
    case ZARR_DTYPE_INT:
        if (itemsize == 1) {
            signed_byte = true; // GDAL 3.6 has no Int8: a Byte band marked SIGNEDBYTE
            return GDT_Byte;
        }
        return itemsize == 2 ? GDT_Int16 : itemsize == 4 ? GDT_Int32 : GDT_Int64;
    case ZARR_DTYPE_FLOAT:
        return itemsize == 4 ? GDT_Float32 : itemsize == 8 ? GDT_Float64 : GDT_Unknown;
    case ZARR_DTYPE_COMPLEX:
        return itemsize == 8 ? GDT_CFloat32 : itemsize == 16 ? GDT_CFloat64 : GDT_Unknown;
    default:
        return GDT_Unknown;
    }
}

// One value of GDAL type `type` as a double (the real part of a complex).
double AsDouble(const unsigned char *value, GDALDataType type, bool signed_byte) {
    if (type == GDT_Byte && signed_byte) return static_cast<signed char>(value[0]);
    double out = 0;
    GDALCopyWords(value, type == GDT_CFloat32 ? GDT_Float32 : type == GDT_CFloat64 ? GDT_Float64 : type, 0,
                  &out, GDT_Float64, 0, 1);
    return out;
}

class LibZarrDataset;

class LibZarrRasterBand final : public GDALPamRasterBand {
  public:
    LibZarrRasterBand(LibZarrDataset *dataset, int band, GDALDataType type, int block_x, int block_y);
    CPLErr IReadBlock(int block_x_offset, int block_y_offset, void *image) override;
    CPLErr IRasterIO(GDALRWFlag rw, int x, int y, int width, int height, void *data, int buffer_width,
                     int buffer_height, GDALDataType buffer_type, GSpacing pixel_space, GSpacing line_space,
                     GDALRasterIOExtraArg *extra) override;
    double GetNoDataValue(int *success) override;

    bool has_nodata_ = false;
    double nodata_ = 0;

  private:
    CPLErr Read(uint64_t x0, uint64_t y0, uint64_t width, uint64_t height, uint64_t pixel_stride,
                uint64_t line_stride, void *out, size_t out_size);
};

class LibZarrDataset final : public GDALPamDataset {
  public:
    ~LibZarrDataset() override {
        zarr_array_close(array_);
        zarr_store_close(store_);
    }

    static int Identify(GDALOpenInfo *info);
    static GDALDataset *Open(GDALOpenInfo *info);

    zarr_store *store_ = nullptr;
    zarr_array *array_ = nullptr;
    size_t ndim_ = 0;
    size_t itemsize_ = 0;
};

LibZarrRasterBand::LibZarrRasterBand(LibZarrDataset *dataset, int band, GDALDataType type, int block_x,
                                     int block_y) {
    poDS = dataset;
    nBand = band;
    eDataType = type;
    nBlockXSize = block_x;
    nBlockYSize = block_y;
}

CPLErr LibZarrRasterBand::IReadBlock(int block_x_offset, int block_y_offset, void *image) {
    auto *dataset = static_cast<LibZarrDataset *>(poDS);
    const uint64_t x0 = static_cast<uint64_t>(block_x_offset) * nBlockXSize;
    const uint64_t y0 = static_cast<uint64_t>(block_y_offset) * nBlockYSize;
    const uint64_t width = std::min<uint64_t>(nBlockXSize, nRasterXSize - x0);
    const uint64_t height = std::min<uint64_t>(nBlockYSize, nRasterYSize - y0);
    const size_t block_bytes = static_cast<size_t>(nBlockXSize) * nBlockYSize * dataset->itemsize_;
    if (width < static_cast<uint64_t>(nBlockXSize) || height < static_cast<uint64_t>(nBlockYSize))
        memset(image, 0, block_bytes); // the part of an edge block outside the array
    // The block's valid part lands at the start of each of the buffer's rows.
    return Read(x0, y0, width, height, 1, nBlockXSize, image, block_bytes);
}

// Reads the window of `width` x `height` pixels at (`x0`, `y0`) into `out`, `pixel_stride` and
// `line_stride` elements apart: one libzarr call, which decodes the chunks it touches on its
// threads straight into `out`.
CPLErr LibZarrRasterBand::Read(uint64_t x0, uint64_t y0, uint64_t width, uint64_t height,
                               uint64_t pixel_stride, uint64_t line_stride, void *out, size_t out_size) {
    auto *dataset = static_cast<LibZarrDataset *>(poDS);
    const bool cube = dataset->ndim_ == 3;
    const uint64_t band = static_cast<uint64_t>(nBand - 1);
    const uint64_t start[3] = {cube ? band : y0, cube ? y0 : x0, x0};
    const uint64_t count[3] = {cube ? 1 : height, cube ? height : width, width};
    const uint64_t strides[3] = {cube ? line_stride * height : line_stride, cube ? line_stride : pixel_stride,
                                 pixel_stride};
    if (zarr_array_read_strided(dataset->array_, dataset->ndim_, start, count, nullptr, strides, out,
                                out_size) != ZARR_OK) {
        CPLError(CE_Failure, CPLE_AppDefined, "LIBZARR: window (%llu, %llu) of %llu x %llu, band %d: %s",
                 static_cast<unsigned long long>(x0), static_cast<unsigned long long>(y0),
                 static_cast<unsigned long long>(width), static_cast<unsigned long long>(height), nBand,
                 zarr_last_error());
        return CE_Failure;
    }
    return CE_None;
}

// Reads of whole-resolution windows in the band's own type go to libzarr in one call, with
// GDAL's pixel and line spacing as buffer strides (many chunks decoded at once, no block
// cache); the others (resampling, type conversion, writes) go through the blocks.
CPLErr LibZarrRasterBand::IRasterIO(GDALRWFlag rw, int x, int y, int width, int height, void *data,
                                    int buffer_width, int buffer_height, GDALDataType buffer_type,
                                    GSpacing pixel_space, GSpacing line_space, GDALRasterIOExtraArg *extra) {
    const GSpacing item = GDALGetDataTypeSizeBytes(eDataType);
    const bool direct = rw == GF_Read && buffer_width == width && buffer_height == height &&
                        buffer_type == eDataType && width > 0 && height > 0 && pixel_space > 0 &&
                        line_space > 0 && pixel_space % item == 0 && line_space % item == 0;
    if (!direct)
        return GDALPamRasterBand::IRasterIO(rw, x, y, width, height, data, buffer_width, buffer_height,
                                            buffer_type, pixel_space, line_space, extra);
    const size_t size = static_cast<size_t>((height - 1) * line_space + (width - 1) * pixel_space + item);
    return Read(static_cast<uint64_t>(x), static_cast<uint64_t>(y), static_cast<uint64_t>(width),
                static_cast<uint64_t>(height), static_cast<uint64_t>(pixel_space / item),
                static_cast<uint64_t>(line_space / item), data, size);
}

double LibZarrRasterBand::GetNoDataValue(int *success) {
    if (success) *success = has_nodata_;
    return has_nodata_ ? nodata_ : 0;
}

// `LIBZARR:...` names, and directories holding a Zarr v3 node (`zarr.json`), which GDAL's own
// Zarr driver cannot read before 3.8; Zarr v2 directories are left to it unless named with the
// prefix.
int LibZarrDataset::Identify(GDALOpenInfo *info) {
    if (STARTS_WITH_CI(info->pszFilename, kPrefix)) return TRUE;
    if (!info->bIsDirectory) return FALSE;
    VSIStatBufL stat;
    return VSIStatL((std::string(info->pszFilename) + "/zarr.json").c_str(), &stat) == 0;
}

GDALDataset *LibZarrDataset::Open(GDALOpenInfo *info) {
    if (!Identify(info)) return nullptr;
    if (info->eAccess == GA_Update) {
        CPLError(CE_Failure, CPLE_NotSupported, "LIBZARR: the driver reads only");
        return nullptr;
    }
    Target target;
    if (!ParseTarget(info->pszFilename, target)) {
        CPLError(CE_Failure, CPLE_OpenFailed, "LIBZARR: %s is not LIBZARR:\"LOCATION\":PATH",
                 info->pszFilename);
        return nullptr;
    }
    auto fail = [&](const char *what) -> GDALDataset * {
        CPLError(CE_Failure, CPLE_OpenFailed, "LIBZARR: %s: %s", what, zarr_last_error());
        return nullptr;
    };
    auto dataset = std::make_unique<LibZarrDataset>();
    if (zarr_store_open(target.location.c_str(), ZARR_MODE_READ, &dataset->store_) != ZARR_OK)
        return fail("opening the store");
    if (zarr_array_open(dataset->store_, target.path.c_str(), &dataset->array_) != ZARR_OK)
        return fail("opening the array");
    zarr_dtype_kind kind = 0;
    if (zarr_array_ndim(dataset->array_, &dataset->ndim_) != ZARR_OK ||
        zarr_array_dtype(dataset->array_, &kind, &dataset->itemsize_) != ZARR_OK)
        return fail("reading the array's type");
    if (dataset->ndim_ != 2 && dataset->ndim_ != 3) {
        CPLError(CE_Failure, CPLE_NotSupported,
                 "LIBZARR: %s has %zu dimensions: rasters are 2-D arrays, or 3-D ones (bands first)",
                 info->pszFilename, dataset->ndim_);
        return nullptr;
    }
    bool signed_byte = false;
    const GDALDataType type = GdalType(kind, dataset->itemsize_, signed_byte);
    if (type == GDT_Unknown) {
        CPLError(CE_Failure, CPLE_NotSupported, "LIBZARR: %s: GDAL has no type for its values",
                 info->pszFilename);
        return nullptr;
    }
    uint64_t shape[3], chunks[3];
    if (zarr_array_shape(dataset->array_, dataset->ndim_, shape) != ZARR_OK)
        return fail("reading the array's shape");
    const zarr_status chunked = zarr_array_inner_chunks(dataset->array_, dataset->ndim_, chunks);
    if (chunked == ZARR_ERR_UNSUPPORTED) {
        // A rectilinear grid of chunks of unequal lengths: blocks of up to 256 x 256 pixels
        // (reads of any box work; these only set GDAL's unit of caching).
        for (size_t d = 0; d < dataset->ndim_; d++)
            chunks[d] = std::max<uint64_t>(1, std::min<uint64_t>(shape[d], 256));
    } else if (chunked != ZARR_OK) {
        return fail("reading the array's chunk shape");
    }
    const size_t rows = dataset->ndim_ - 2, columns = dataset->ndim_ - 1;
    const uint64_t bands = dataset->ndim_ == 3 ? shape[0] : 1;
    if (shape[rows] > INT_MAX || shape[columns] > INT_MAX || bands > INT_MAX || chunks[rows] > INT_MAX ||
        chunks[columns] > INT_MAX) {
        CPLError(CE_Failure, CPLE_NotSupported, "LIBZARR: %s is larger than GDAL's %d pixels a side",
                 info->pszFilename, INT_MAX);
        return nullptr;
    }
    dataset->nRasterXSize = static_cast<int>(shape[columns]);
    dataset->nRasterYSize = static_cast<int>(shape[rows]);
    std::vector<unsigned char> fill(dataset->itemsize_);
    bool has_fill = false;
    if (zarr_array_fill_value(dataset->array_, fill.data(), fill.size(), &has_fill) != ZARR_OK)
        return fail("reading the fill value");
    for (int b = 1; b <= static_cast<int>(bands); b++) {
        auto *band = new LibZarrRasterBand(dataset.get(), b, type, static_cast<int>(chunks[columns]),
                                           static_cast<int>(chunks[rows]));
        band->has_nodata_ = has_fill;
        band->nodata_ = has_fill ? AsDouble(fill.data(), type, signed_byte) : 0;
        if (signed_byte) band->SetMetadataItem("PIXELTYPE", "SIGNEDBYTE", "IMAGE_STRUCTURE");
        dataset->SetBand(b, band);
    }
    dataset->SetDescription(info->pszFilename);
    dataset->TryLoadXML();
    return dataset.release();
}

} // namespace

extern "C" CPL_DLL void GDALRegister_LIBZARR();

// Registers the driver (GDAL calls it when it loads the plugin from GDAL_DRIVER_PATH).
void GDALRegister_LIBZARR() {
    if (!GDAL_CHECK_VERSION("LIBZARR") || GDALGetDriverByName("LIBZARR") != nullptr) return;
    auto *driver = new GDALDriver();
    driver->SetDescription("LIBZARR");
    driver->SetMetadataItem(GDAL_DCAP_RASTER, "YES");
    driver->SetMetadataItem(GDAL_DMD_LONGNAME, "Zarr v2 and v3 through libzarr");
    driver->SetMetadataItem(GDAL_DMD_CONNECTION_PREFIX, kPrefix);
    driver->SetMetadataItem(GDAL_DMD_OPENOPTIONLIST, "<OpenOptionList/>");
    driver->pfnOpen = LibZarrDataset::Open;
    driver->pfnIdentify = LibZarrDataset::Identify;
    GetGDALDriverManager()->RegisterDriver(driver);
}
